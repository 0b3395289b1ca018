package j4p

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// The seed corpora are in testdata/fuzz/<target>/; go test runs them.

func FuzzSplitPath(f *testing.F) {
	f.Add("read/java.lang:type=Memory/HeapMemoryUsage/used")
	f.Fuzz(func(t *testing.T, p string) {
		parts, err := SplitPath(p)
		if err != nil {
			return
		}
		// Escaping the parts and splitting again gives them back (an empty
		// last part is dropped by design, so leave such inputs).
		if len(parts) > 0 && parts[len(parts)-1] == "" {
			return
		}
		es := make([]string, len(parts))
		for i, s := range parts {
			es[i] = EscapePart(s)
		}
		joined := "/" // SplitPath drops one leading slash
		for i, s := range es {
			if i > 0 {
				joined += "/"
			}
			joined += s
		}
		again, err := SplitPath(joined)
		if err != nil || !slices.Equal(again, parts) {
			t.Fatalf("%q → %q → %q → %q, %v", p, parts, joined, again, err)
		}
		// The parser proper must not fail other than with an error.
		for _, d := range []Dialect{Dialect2, Dialect030} {
			ParseGET(p, d, DefaultParams())
		}
	})
}

func FuzzParsePOST(f *testing.F) {
	f.Add([]byte(`{"type":"read","mbean":"java.lang:type=Memory","attribute":"HeapMemoryUsage","path":"used"}`))
	lim := Limits{MaxDepth: 32, MaxBulk: 256}
	f.Fuzz(func(t *testing.T, body []byte) {
		reqs, errs, _, err := ParsePOST(body, DefaultParams(), lim)
		if err != nil {
			return
		}
		for i, r := range reqs {
			if errs[i] != nil {
				continue
			}
			// decode → encode (the request echo) → decode gives the same request.
			b, ok := appendJSON(nil, echo(r), 0)
			if !ok {
				t.Fatal("echo not encodable")
			}
			again, errs2, _, err := ParsePOST(b, DefaultParams(), lim)
			if err != nil || errs2[0] != nil {
				t.Fatalf("echo %s of %s does not parse: %v %v", b, body, err, errs2[0])
			}
			r2 := again[0]
			if r2.Type != r.Type || r2.MBean != r.MBean || r2.Operation != r.Operation || r2.RawPath != r.RawPath ||
				!slices.Equal(r2.Attributes, r.Attributes) || len(r2.Arguments) != len(r.Arguments) {
				t.Fatalf("round trip of %s: %+v != %+v", body, r2, r)
			}
		}
	})
}

// FuzzHandler sends arbitrary GET paths, query strings and POST bodies
// through the whole handler: it never panics, and every JSON answer is
// valid JSON.
func FuzzHandler(f *testing.F) {
	f.Add(false, "/jolokia/read/java.lang:type=Memory/HeapMemoryUsage/used", "", []byte(nil))
	h, _ := newTestHandler(f, func(c *Config) { c.AllowWrite, c.AllowExec = true, true })
	f.Fuzz(func(t *testing.T, post bool, path, query string, body []byte) {
		r := &http.Request{
			Method:     "GET",
			URL:        &url.URL{Path: path, RawQuery: query},
			Header:     http.Header{},
			RemoteAddr: "127.0.0.1:1",
			Body:       http.NoBody,
		}
		if post {
			r.Method = "POST"
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") && !json.Valid(w.Body.Bytes()) {
			t.Fatalf("invalid JSON for %s %q ? %q: %q", r.Method, path, query, w.Body.Bytes())
		}
	})
}

// FuzzParseObjectName: a parsed name's canonical and given forms parse to
// the same name, and a name always matches itself.
func FuzzParseObjectName(f *testing.F) {
	f.Add("java.lang:type=Memory")
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseObjectName(s)
		if err != nil {
			return
		}
		for _, form := range []string{n.String(), n.Canonical()} {
			m, err := ParseObjectName(form)
			if err != nil || m.Canonical() != n.Canonical() || m.IsPattern() != n.IsPattern() {
				t.Fatalf("%q → %q → %v, %v", s, form, m, err)
			}
		}
		if !n.IsPattern() && !n.Match(n) {
			t.Fatalf("%q does not match itself", s)
		}
		if v := n.Key("name"); Quote(Unquote(v)) == v {
			if m, err := ParseObjectName("d:name=" + Quote(Unquote(v))); err != nil || m.IsPattern() && !valuePattern(v) {
				t.Fatalf("requoting %q: %v", v, err)
			}
		}
	})
}
