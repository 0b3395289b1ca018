package j4p

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func doFrom(h http.Handler, remote, method, target, body string, hdr ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, target, strings.NewReader(body))
	r.RemoteAddr = remote
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestRemoteHosts(t *testing.T) {
	h, _ := newTestHandler(t, nil)
	if w := doFrom(h, "192.0.2.1:5000", "GET", "/jolokia/version", ""); w.Code != 403 {
		t.Errorf("remote client by default: HTTP %d; want 403", w.Code)
	}
	if w := doFrom(h, "[::1]:5000", "GET", "/jolokia/version", ""); w.Code != 200 {
		t.Errorf("::1 client: HTTP %d; want 200", w.Code)
	}
	h, _ = newTestHandler(t, func(c *Config) { c.AllowRemote = true })
	if w := doFrom(h, "192.0.2.1:5000", "GET", "/jolokia/version", ""); w.Code != 200 {
		t.Errorf("AllowRemote: HTTP %d; want 200", w.Code)
	}
	h, _ = newTestHandler(t, nil)
	for _, hd := range [][2]string{
		{"X-Forwarded-For", "203.0.113.9"}, {"X-Forwarded-For", "127.0.0.1, 203.0.113.9"}, {"X-Real-IP", "203.0.113.9"},
		{"Forwarded", `for="[2001:db8::1]:80";proto=http`}, {"Forwarded", "for=unknown"},
	} {
		if w := doFrom(h, "127.0.0.1:5000", "GET", "/jolokia/version", "", hd[0], hd[1]); w.Code != 403 {
			t.Errorf("local proxy for a remote client (%s: %s): HTTP %d; want 403", hd[0], hd[1], w.Code)
		}
	}
	if w := doFrom(h, "127.0.0.1:5000", "GET", "/jolokia/version", "", "X-Forwarded-For", "::1", "Forwarded", "for=127.0.0.1"); w.Code != 200 {
		t.Errorf("local proxy for a local client: HTTP %d", w.Code)
	}
	h, _ = newTestHandler(t, func(c *Config) { c.TrustProxyHeaders = true })
	if w := doFrom(h, "127.0.0.1:5000", "GET", "/jolokia/version", "", "X-Forwarded-For", "203.0.113.9"); w.Code != 200 {
		t.Errorf("TrustProxyHeaders: HTTP %d", w.Code)
	}
	pol := loadTestPolicy(t)
	h, _ = newTestHandler(t, func(c *Config) { c.Policy = pol })
	for remote, want := range map[string]int{"10.0.9.9:1": 200, "192.0.2.1:1": 403, "[::1]:1": 403} {
		if w := doFrom(h, remote, "GET", "/jolokia/version", ""); w.Code != want {
			t.Errorf("policy hosts, client %s: HTTP %d; want %d", remote, w.Code, want)
		}
	}
}

func TestBasicAuth(t *testing.T) {
	h, _ := newTestHandler(t, func(c *Config) { c.User, c.Password = "ops", "s3cret" })
	w := do(h, "GET", "/jolokia/version", "")
	if w.Code != 401 || !strings.HasPrefix(w.Header().Get("WWW-Authenticate"), "Basic ") {
		t.Errorf("no credentials: HTTP %d, %q", w.Code, w.Header().Get("WWW-Authenticate"))
	}
	for _, up := range [][2]string{{"ops", "wrong"}, {"op", "s3cret"}, {"", ""}} {
		r := httptest.NewRequest("GET", "/jolokia/version", nil)
		r.RemoteAddr = "127.0.0.1:1"
		r.SetBasicAuth(up[0], up[1])
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != 401 {
			t.Errorf("credentials %q: HTTP %d; want 401", up, w.Code)
		}
	}
	r := httptest.NewRequest("GET", "/jolokia/version", nil)
	r.RemoteAddr = "127.0.0.1:1"
	r.SetBasicAuth("ops", "s3cret")
	w = httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != 200 {
		t.Errorf("right credentials: HTTP %d", w.Code)
	}
	if v := decode(t, w).(map[string]any)["value"].(map[string]any)["details"].(map[string]any)["secured"]; v != true {
		t.Errorf("details.secured = %v", v)
	}
	if w := do(h, "OPTIONS", "/jolokia/version", ""); w.Code != 204 {
		t.Errorf("preflight: HTTP %d; want 204 without credentials", w.Code)
	}
}

func TestCORS(t *testing.T) {
	h, _ := newTestHandler(t, nil)
	w := do(h, "GET", "/jolokia/version", "", "Origin", "http://evil.org")
	if w.Code != 200 || w.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("CORS off: HTTP %d, ACAO %q", w.Code, w.Header().Get("Access-Control-Allow-Origin"))
	}
	h, _ = newTestHandler(t, func(c *Config) { c.AllowOrigins = []string{"http://*.example.com"}; c.StrictOrigin = true })
	w = do(h, "GET", "/jolokia/version", "", "Origin", "http://ui.example.com")
	if w.Header().Get("Access-Control-Allow-Origin") != "http://ui.example.com" {
		t.Errorf("allowed origin: ACAO %q", w.Header().Get("Access-Control-Allow-Origin"))
	}
	if w := do(h, "GET", "/jolokia/version", "", "Origin", "http://evil.org"); w.Code != 403 {
		t.Errorf("strict, foreign origin: HTTP %d", w.Code)
	}
	if w := do(h, "GET", "/jolokia/version", "", "Origin", "https://ui.example.com"); w.Code != 403 {
		t.Errorf("https origin over http: HTTP %d", w.Code)
	}
	w = do(h, "OPTIONS", "/jolokia/", "", "Origin", "http://ui.example.com", "Access-Control-Request-Method", "POST")
	if w.Code != 204 || w.Header().Get("Access-Control-Allow-Methods") == "" {
		t.Errorf("preflight: HTTP %d, %v", w.Code, w.Header())
	}
	if w := do(h, "GET", "/jolokia/version", "", "Sec-Fetch-Dest", "script", "Sec-Fetch-Mode", "no-cors"); w.Code != 403 {
		t.Errorf("script load: HTTP %d", w.Code)
	}
}

func TestConfigVerify(t *testing.T) {
	c := DefaultConfig()
	if err := c.Verify(); err != nil {
		t.Fatal(err)
	}
	c.Addr = "0.0.0.0:8778"
	if err := c.Verify(); err == nil {
		t.Error("wildcard bind without authentication accepted")
	}
	c.User, c.Password = "u", "p"
	if err := c.Verify(); err != nil {
		t.Errorf("wildcard bind with authentication: %v", err)
	}
	for _, mod := range []func(*Config){
		func(c *Config) { c.Base = "jolokia" },
		func(c *Config) { c.Base = "/jolokia/" },
		func(c *Config) { c.MaxDepth = 0 },
		func(c *Config) { c.MaxBodyBytes = 0 },
		func(c *Config) { c.ReadTimeout = 0 },
		func(c *Config) { c.Password = "p" },
	} {
		c := DefaultConfig()
		mod(&c)
		if err := c.Verify(); err == nil {
			t.Errorf("bad config accepted: %+v", c)
		}
	}
}

func TestHostileBodies(t *testing.T) {
	h, _ := newTestHandler(t, func(c *Config) { c.MaxBodyBytes = 4096; c.MaxBulk = 3 })
	big := `{"type":"read","mbean":"a:b=c","attribute":"` + strings.Repeat("x", 10000) + `"}`
	if w := do(h, "POST", "/jolokia/", big); w.Code != 413 {
		t.Errorf("huge body: HTTP %d; want 413", w.Code)
	}
	deep := strings.Repeat("[", 2000) + strings.Repeat("]", 2000)
	if w := do(h, "POST", "/jolokia/", deep); w.Code != 400 || !strings.Contains(w.Body.String(), "deep") {
		t.Errorf("deep JSON: HTTP %d %s", w.Code, w.Body)
	}
	bulk := "[" + strings.TrimSuffix(strings.Repeat(`{"type":"version"},`, 4), ",") + "]"
	if w := do(h, "POST", "/jolokia/", bulk); w.Code != 400 {
		t.Errorf("bulk over limit: HTTP %d", w.Code)
	}
	for _, p := range []string{"read/java.lang:type=Memory/Verbose!", "read/%FF%FE:a=b/x", "read/" + strings.Repeat("a/", 2000), "exec/a:b=c/" + strings.Repeat("!", 1001)} {
		w := do(h, "GET", "/jolokia/"+p, "")
		if w.Code != 200 || decode(t, w).(map[string]any)["status"] == 200 {
			t.Errorf("malformed path %.40q: HTTP %d %s", p, w.Code, w.Body)
		}
	}
	h, _ = newTestHandler(t, func(c *Config) { c.MaxResponseBytes = 300 })
	w := do(h, "GET", "/jolokia/list", "")
	if resp := decode(t, w).(map[string]any); jsonText(resp["status"]) != "500" || !strings.Contains(jsonText(resp["error"]), "too large") {
		t.Errorf("response over limit: %s", w.Body)
	}
}

// startServer serves the test beans on a loopback port.
func startServer(t *testing.T, mod func(*Config)) *Server {
	t.Helper()
	c := testConfig()
	c.Addr = "127.0.0.1:0"
	if mod != nil {
		mod(c)
	}
	s, err := NewServer(c, newTestBeans())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func getVersion(addr string) error {
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + addr + "/jolokia/version")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	io.Copy(io.Discard, resp.Body)
	if resp.StatusCode != 200 {
		return fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return nil
}

func TestSlowloris(t *testing.T) {
	s := startServer(t, func(c *Config) { c.ReadHeaderTimeout = 200 * time.Millisecond; c.MaxConns = 2 })
	addr := s.Addr().String()
	var conns []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		c.Write([]byte("GET /jolokia/version HTTP/1.1\r\nHost: x\r\nX-Slow: "))
		conns = append(conns, c)
	}
	// Both slots are taken: a third client is closed at once...
	c3, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c3.SetReadDeadline(time.Now().Add(2 * time.Second))
	if _, err := c3.Read(make([]byte, 1)); err == nil {
		t.Error("third connection over MaxConns was served")
	}
	c3.Close()
	// ...and the slow ones are cut at the header timeout, freeing the slots.
	start := time.Now()
	for _, c := range conns {
		c.SetReadDeadline(time.Now().Add(3 * time.Second))
		io.Copy(io.Discard, c)
		c.Close()
	}
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("slow clients held on for %v", d)
	}
	deadline := time.Now().Add(3 * time.Second)
	for {
		err := getVersion(addr)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("server unusable after slow clients: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestManyConnections(t *testing.T) {
	const n = 10000
	// Long header timeouts: the admitted connections wait idle during the flood.
	s := startServer(t, func(c *Config) { c.MaxConns = 64; c.ReadHeaderTimeout, c.ReadTimeout = time.Minute, time.Minute })
	addr := s.Addr().String()
	var conns []net.Conn
	for i := 0; i < n; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			break // the machine's limit: what was opened still counts
		}
		conns = append(conns, c)
	}
	// A low descriptor limit stops the client early; what it opened still
	// has to be more than the server admits.
	if len(conns) < 500 {
		t.Fatalf("opened only %d connections", len(conns))
	}
	t.Logf("%d connections open, 64 admitted", len(conns))
	// Every connection over the limit is closed by the server.
	closed := 0
	for _, c := range conns[64:] {
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		if _, err := c.Read(make([]byte, 1)); err != nil {
			closed++
		}
	}
	if closed != len(conns)-64 {
		t.Errorf("%d of %d excess connections closed", closed, len(conns)-64)
	}
	// The admitted ones still work.
	br := bufio.NewReader(conns[0])
	fmt.Fprintf(conns[0], "GET /jolokia/version HTTP/1.1\r\nHost: x\r\n\r\n")
	conns[0].SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("admitted connection: %v %v", resp, err)
	}
	for _, c := range conns {
		c.Close()
	}
	deadline := time.Now().Add(5 * time.Second)
	for getVersion(addr) != nil {
		if time.Now().After(deadline) {
			t.Fatal("server unusable after the flood")
		}
		time.Sleep(20 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Errorf("shutdown: %v", err)
	}
	if err := s.Err(); err != nil {
		t.Errorf("serve error: %v", err)
	}
}

func TestServerHugeRequests(t *testing.T) {
	s := startServer(t, func(c *Config) { c.MaxBodyBytes = 1 << 10 })
	base := "http://" + s.Addr().String() + "/jolokia/"
	resp, err := http.Get(base + "read/a:b=c/" + strings.Repeat("x", 64<<10))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Errorf("64 KiB URL: HTTP %d; want 431", resp.StatusCode)
	}
	// A body over the limit is refused without reading it all.
	resp, err = http.Post(base, "application/json", io.LimitReader(zeros{}, 64<<20))
	if err == nil {
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("64 MiB body: HTTP %d; want 413", resp.StatusCode)
		}
	} // else: the server closed the connection while the client still sent, which is fine
	if err := getVersion(s.Addr().String()); err != nil {
		t.Errorf("server after huge requests: %v", err)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

func TestSlowBody(t *testing.T) {
	s := startServer(t, func(c *Config) { c.ReadTimeout = 300 * time.Millisecond })
	c, err := net.Dial("tcp", s.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /jolokia/ HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n{\"type\":")
	start := time.Now()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	// Trickle a byte now and then; the server must give up at its read
	// timeout, answering 400 or closing.
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 50; i++ {
			if _, err := c.Write([]byte(" ")); err != nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	io.Copy(io.Discard, c)
	if d := time.Since(start); d > 4*time.Second {
		t.Errorf("slow body held the connection for %v", d)
	}
	<-done
	if err := getVersion(s.Addr().String()); err != nil {
		t.Errorf("server after a slow body: %v", err)
	}
}
