package j4p

import (
	"crypto/subtle"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Handler serves the endpoint over HTTP. It is safe for concurrent use.
type Handler struct {
	cfg     Config
	mbs     MBeanServer
	origins []string
	strict  bool
	now     func() time.Time
	// lookup resolves policy host names (tests replace it).
	lookup func(string) ([]net.IP, error)
}

// NewHandler returns a handler serving mbs; cfg nil means DefaultConfig.
func NewHandler(cfg *Config, mbs MBeanServer) (*Handler, error) {
	c := DefaultConfig()
	if cfg != nil {
		c = *cfg
	}
	if err := c.Verify(); err != nil {
		return nil, err
	}
	if mbs == nil {
		return nil, errorf(ErrBadConfig, "no MBean server")
	}
	h := &Handler{cfg: c, mbs: mbs, now: c.Now, origins: c.AllowOrigins, strict: c.StrictOrigin}
	if h.now == nil {
		h.now = time.Now
	}
	if c.Policy != nil {
		h.origins = append(append([]string(nil), h.origins...), c.Policy.Origins...)
		h.strict = h.strict || c.Policy.StrictOrigin
	}
	return h, nil
}

// Config returns the handler's settings.
func (h *Handler) Config() Config { return h.cfg }

// httpError answers a transport-level failure in text.
func httpError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	io.WriteString(w, msg+"\n")
}

func remoteIP(r *http.Request) net.IP {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	return net.ParseIP(host)
}

func (h *Handler) hostAllowed(ip net.IP) bool {
	if ip == nil {
		return false
	}
	if h.cfg.Policy.HasRemote() {
		return h.cfg.Policy.AllowHost(ip, h.lookup)
	}
	return h.cfg.AllowRemote || ip.IsLoopback()
}

// forwardedAllowed applies the host rule to the clients a proxy names in
// X-Forwarded-For, X-Real-IP and Forwarded, as Jolokia 2.x does, unless
// Config.TrustProxyHeaders: a local proxy must not open the endpoint to
// the hosts behind it. A name that is not an address is refused.
func (h *Handler) forwardedAllowed(r *http.Request) bool {
	if h.cfg.TrustProxyHeaders {
		return true
	}
	var addrs []string
	for _, v := range r.Header.Values("X-Forwarded-For") {
		addrs = append(addrs, strings.Split(v, ",")...)
	}
	addrs = append(addrs, r.Header.Values("X-Real-Ip")...)
	for _, v := range r.Header.Values("Forwarded") {
		for _, elem := range strings.Split(v, ",") {
			for _, pair := range strings.Split(elem, ";") {
				k, val, ok := strings.Cut(strings.TrimSpace(pair), "=")
				if ok && strings.EqualFold(k, "for") {
					addrs = append(addrs, val)
				}
			}
		}
	}
	for _, a := range addrs {
		a = strings.Trim(strings.TrimSpace(a), `"`)
		if host, _, err := net.SplitHostPort(a); err == nil {
			a = host
		}
		a = strings.TrimSuffix(strings.TrimPrefix(a, "["), "]")
		if !h.hostAllowed(net.ParseIP(a)) {
			return false
		}
	}
	return true
}

func (h *Handler) authorized(r *http.Request) bool {
	u, p, ok := r.BasicAuth()
	if !ok {
		return false
	}
	uo := subtle.ConstantTimeCompare([]byte(u), []byte(h.cfg.User))
	po := subtle.ConstantTimeCompare([]byte(p), []byte(h.cfg.Password))
	return uo&po == 1
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !h.hostAllowed(remoteIP(r)) || !h.forwardedAllowed(r) {
		httpError(w, http.StatusForbidden, "j4p: client host not allowed")
		return
	}
	// Fetch metadata: a browser loading the endpoint as a script, image
	// or frame of another page is refused (navigation is fine).
	if d := r.Header.Get("Sec-Fetch-Dest"); d != "" && d != "empty" && r.Header.Get("Sec-Fetch-Mode") != "navigate" {
		httpError(w, http.StatusForbidden, "j4p: cross-site load refused")
		return
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		ok := originAllowed(h.origins, origin)
		if !ok && h.strict {
			httpError(w, http.StatusForbidden, "j4p: origin not allowed")
			return
		}
		if ok {
			if strings.HasPrefix(origin, "https://") && r.TLS == nil {
				httpError(w, http.StatusForbidden, "j4p: https origin over plain http")
				return
			}
			hd := w.Header()
			hd.Set("Access-Control-Allow-Origin", origin)
			hd.Set("Access-Control-Allow-Credentials", "true")
			hd.Add("Vary", "Origin")
		}
	}
	if r.Method == http.MethodOptions {
		// CORS preflight: never authenticated.
		if w.Header().Get("Access-Control-Allow-Origin") != "" {
			hd := w.Header()
			hd.Set("Access-Control-Allow-Methods", "GET, POST")
			hd.Set("Access-Control-Allow-Headers", "Authorization, Content-Type")
			hd.Set("Access-Control-Max-Age", "3600")
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
	if h.cfg.User != "" && !h.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Basic realm="`+strings.ReplaceAll(h.cfg.Realm, `"`, "")+`"`)
		httpError(w, http.StatusUnauthorized, "j4p: authentication required")
		return
	}
	if !h.cfg.Policy.AllowMethod(r.Method) {
		httpError(w, http.StatusForbidden, "j4p: HTTP method "+r.Method+" not allowed by policy")
		return
	}
	rel, ok := h.relPath(r.URL.Path)
	if !ok {
		httpError(w, http.StatusNotFound, "j4p: not found")
		return
	}
	params := DefaultParams()
	q := r.URL.Query()
	if err := params.ParseQuery(q); err != nil {
		httpError(w, http.StatusBadRequest, err.Error())
		return
	}
	switch r.Method {
	case http.MethodGet:
		if p := q.Get("p"); p != "" {
			rel = p
		}
		req, err := ParseGET(rel, h.cfg.Dialect, params)
		h.respond(w, params, []*Request{req}, []error{err}, false)
	case http.MethodPost:
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.cfg.MaxBodyBytes))
		if err != nil {
			var mb *http.MaxBytesError
			if errors.As(err, &mb) {
				httpError(w, http.StatusRequestEntityTooLarge, ErrBodyTooLarge.Error()+": over "+strconv.FormatInt(h.cfg.MaxBodyBytes, 10)+" bytes")
				return
			}
			httpError(w, http.StatusBadRequest, "j4p: reading body: "+err.Error())
			return
		}
		reqs, errs, bulk, err := ParsePOST(body, params, Limits{MaxDepth: h.cfg.MaxJSONDepth, MaxBulk: h.cfg.MaxBulk})
		if err != nil {
			if h.cfg.Dialect == Dialect030 {
				h.respond(w, params, []*Request{nil}, []error{err}, false)
				return
			}
			httpError(w, http.StatusBadRequest, err.Error())
			return
		}
		h.respond(w, params, reqs, errs, bulk)
	default:
		w.Header().Set("Allow", "GET, POST, OPTIONS")
		httpError(w, http.StatusBadRequest, "j4p: unsupported HTTP method "+r.Method)
	}
}

// relPath is the path after the base, or false when outside it.
func (h *Handler) relPath(p string) (string, bool) {
	if h.cfg.Base == "/" {
		return p, true
	}
	rest, ok := strings.CutPrefix(p, h.cfg.Base)
	if !ok || rest != "" && rest[0] != '/' {
		return "", false
	}
	return rest, true
}

// respond executes the requests and writes the answer: one object, or an
// array for a bulk.
func (h *Handler) respond(w http.ResponseWriter, params Params, reqs []*Request, errs []error, bulk bool) {
	ts := h.now().Unix()
	budget := h.cfg.MaxResponseBytes
	out := make([]byte, 0, 512)
	if bulk {
		out = append(out, '[')
	}
	status := http.StatusOK
	for i, req := range reqs {
		err := errs[i]
		var val any
		if err == nil {
			val, err = h.safeExecute(req)
		}
		start := len(out)
		if i > 0 {
			out = append(out, ',')
		}
		var env *ordered
		if err != nil {
			env = h.errorEnvelope(req, err, ts)
		} else {
			env = h.okEnvelope(req, val, ts)
		}
		var ok bool
		out, ok = appendJSON(out, env, budget)
		if !ok {
			out = out[:start]
			if i > 0 {
				out = append(out, ',')
			}
			err = errorf(ErrResponseTooLarge, "over %d bytes", budget)
			out, _ = appendJSON(out, h.errorEnvelope(req, err, ts), 0)
		}
		if err != nil && !bulk {
			status = classify(err).Status
		}
	}
	if bulk {
		out = append(out, ']')
	}
	mime := "application/json"
	if h.cfg.Dialect == Dialect030 {
		mime = "text/plain"
	}
	if params.MimeType != "" {
		mime = params.MimeType
	}
	hd := w.Header()
	hd.Set("Content-Type", mime+"; charset=utf-8")
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Content-Length", strconv.Itoa(len(out)))
	if h.cfg.Dialect == Dialect2 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	w.Write(out)
}

// safeExecute runs a request; an MBean that panics fails its request only.
func (h *Handler) safeExecute(r *Request) (v any, err error) {
	defer func() {
		if p := recover(); p != nil {
			v, err = nil, errorf(errMBeanPanic, "%v", p)
		}
	}()
	return h.execute(r)
}

var errMBeanPanic = errors.New("j4p: MBean failed")

// echo is the request as responses repeat it.
func echo(r *Request) *ordered {
	o := newOrdered(6)
	o.add("type", r.Type.String())
	if r.MBean != "" {
		o.add("mbean", r.MBean)
	}
	switch {
	case r.MultiAttr:
		as := make([]any, len(r.Attributes))
		for i, a := range r.Attributes {
			as[i] = a
		}
		o.add("attribute", as)
	case len(r.Attributes) == 1:
		o.add("attribute", r.Attributes[0])
	}
	if r.Operation != "" {
		o.add("operation", r.Operation)
	}
	if r.Type == TypeExec {
		w := walk{maxDepth: 8}
		o.add("arguments", w.jsonValue(r.Arguments, 0))
		if r.Arguments == nil {
			o.vals[len(o.vals)-1] = []any{}
		}
	}
	if r.Type == TypeWrite {
		w := walk{maxDepth: 8}
		o.add("value", w.jsonValue(r.Value, 0))
	}
	if r.RawPath != "" {
		o.add("path", r.RawPath)
	}
	return o
}

func (h *Handler) okEnvelope(r *Request, v any, ts int64) *ordered {
	o := newOrdered(4)
	if r.Params.IncludeRequest {
		o.add("request", echo(r))
	}
	o.add("value", v)
	o.add("timestamp", ts)
	o.add("status", int64(http.StatusOK))
	return o
}

func (h *Handler) errorEnvelope(r *Request, err error, ts int64) *ordered {
	e := classify(err)
	o := newOrdered(7)
	if h.cfg.Dialect == Dialect030 {
		o.add("status", int64(e.Status))
		o.add("error", e.Type+": "+e.Error())
		if h.cfg.AllowErrorDetails {
			o.add("stacktrace", errorChain(err))
		}
		return o
	}
	details := h.cfg.AllowErrorDetails && r != nil
	if r != nil && r.Params.IncludeRequest {
		o.add("request", echo(r))
	}
	o.add("error_type", e.Type)
	o.add("error", e.Error())
	if details && r.Params.IncludeStackTrace {
		o.add("stacktrace", errorChain(err))
	}
	if details && r.Params.SerializeException {
		o.add("error_value", map[string]any{"message": e.Error(), "type": e.Type})
	}
	o.add("status", int64(e.Status))
	return o
}

// errorChain lists the wrapped errors, one a line: Go's nearest thing to
// a stack trace that reveals no code location.
func errorChain(err error) string {
	var b strings.Builder
	for e := err; e != nil; e = errors.Unwrap(e) {
		b.WriteString(e.Error())
		b.WriteByte('\n')
	}
	return b.String()
}
