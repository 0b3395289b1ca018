package j4p

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/url"
	"strconv"
	"strings"
)

// Request is one parsed request.
type Request struct {
	Type Type
	// MBean is the name or pattern as the client wrote it; Name is parsed.
	MBean string
	Name  ObjectName
	// Attributes: one for a plain read or write; several or none (all) for
	// a read given a list; MultiAttr says the client gave a list.
	Attributes []string
	MultiAttr  bool
	Value      any // write: a string from GET, a JSON value from POST
	Operation  string
	Arguments  []any
	// Path is the inner path, split; RawPath as the client wrote it.
	Path    []string
	RawPath string
	Params  Params
	// fromGET: values are strings to convert.
	fromGET bool
}

// Params are the processing parameters of a request. Zero limits mean "the
// agent's cap".
type Params struct {
	MaxDepth           int
	MaxCollectionSize  int
	MaxObjects         int
	IgnoreErrors       bool
	SerializeException bool
	CanonicalNaming    bool
	IncludeStackTrace  bool
	IncludeRequest     bool
	MimeType           string
}

// DefaultParams are Jolokia 2.x's defaults.
func DefaultParams() Params {
	return Params{IncludeRequest: true}
}

// maxParamValue bounds numeric parameters (Jolokia parses ints).
const maxParamValue = 1<<31 - 1

// set applies one processing parameter; unknown names are ignored, as
// Jolokia does.
func (p *Params) set(key, v string) error {
	num := func(dst *int) error {
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 || n > maxParamValue {
			return errorf(ErrBadParam, "%s=%q: want an integer from 0 to %d", key, trunc(v), maxParamValue)
		}
		*dst = n
		return nil
	}
	flag := func(dst *bool) error {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "true", "yes", "on", "1":
			*dst = true
		case "false", "no", "off", "0":
			*dst = false
		case "runtime": // includeStackTrace=runtime: no Go equivalent of RuntimeException
			*dst = true
		default:
			return errorf(ErrBadParam, "%s=%q: want true or false", key, trunc(v))
		}
		return nil
	}
	switch key {
	case "maxDepth":
		return num(&p.MaxDepth)
	case "maxCollectionSize":
		return num(&p.MaxCollectionSize)
	case "maxObjects":
		return num(&p.MaxObjects)
	case "ignoreErrors":
		return flag(&p.IgnoreErrors)
	case "serializeException":
		return flag(&p.SerializeException)
	case "canonicalNaming":
		return flag(&p.CanonicalNaming)
	case "includeStackTrace":
		return flag(&p.IncludeStackTrace)
	case "includeRequest":
		return flag(&p.IncludeRequest)
	case "mimeType":
		switch v {
		case "text/plain", "application/json":
			p.MimeType = v
			return nil
		}
		return errorf(ErrBadParam, "mimeType=%q: want text/plain or application/json", trunc(v))
	}
	return nil
}

// ParseQuery applies the processing parameters of a query string.
func (p *Params) ParseQuery(q url.Values) error {
	for k, vs := range q {
		if len(vs) == 0 {
			continue
		}
		if err := p.set(k, vs[0]); err != nil {
			return err
		}
	}
	return nil
}

func trunc(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// ParseGET parses a GET path (percent-decoded, after the base) in the given
// dialect. params are the processing parameters of the query string.
func ParseGET(path string, d Dialect, params Params) (*Request, error) {
	var parts []string
	var err error
	if d == Dialect030 {
		parts, err = SplitPath030(path)
	} else {
		parts, err = SplitPath(path)
	}
	if err != nil {
		return nil, err
	}
	r := &Request{Type: TypeVersion, Params: params, fromGET: true}
	if len(parts) == 0 {
		return r, nil
	}
	if r.Type, err = ParseType(parts[0]); err != nil {
		return nil, err
	}
	args := parts[1:]
	need := func(n int, what string) error {
		if len(args) < n {
			return errorf(ErrBadRequest, "%v: missing %s", r.Type, what)
		}
		return nil
	}
	switch r.Type {
	case TypeRead:
		if err := need(1, "MBean name"); err != nil {
			return nil, err
		}
		r.MBean = args[0]
		if len(args) > 1 {
			r.Attributes = splitList(args[1])
			r.MultiAttr = len(r.Attributes) > 1
			r.Path = args[2:]
		}
	case TypeWrite:
		if err := need(3, "MBean name, attribute or value"); err != nil {
			return nil, err
		}
		r.MBean, r.Attributes, r.Value, r.Path = args[0], []string{args[1]}, getValue(args[2]), args[3:]
	case TypeExec:
		if err := need(2, "MBean name or operation"); err != nil {
			return nil, err
		}
		r.MBean, r.Operation = args[0], args[1]
		for _, a := range args[2:] {
			r.Arguments = append(r.Arguments, getValue(a))
		}
	case TypeSearch:
		if err := need(1, "pattern"); err != nil {
			return nil, err
		}
		r.MBean = args[0]
	case TypeList:
		r.Path = args
	case TypeVersion:
	}
	if len(r.Path) > 0 {
		r.RawPath = joinInnerPath(r.Path)
	}
	return r, r.parseName()
}

// getValue maps the GET spelling of null.
func getValue(s string) any {
	if s == "[null]" {
		return nil
	}
	return s
}

func (r *Request) parseName() error {
	if r.Type == TypeList || r.Type == TypeVersion {
		return nil
	}
	n, err := ParseObjectName(r.MBean)
	if err != nil {
		return err
	}
	r.Name = n
	return nil
}

// Limits bound a POST body before it is decoded.
type Limits struct {
	MaxDepth int // JSON nesting
	MaxBulk  int // requests in one array
}

// CheckJSONDepth scans b once and fails when arrays and objects nest
// deeper than max; it never recurses.
func CheckJSONDepth(b []byte, max int) error {
	depth := 0
	inStr := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inStr {
			switch c {
			case '\\':
				i++
			case '"':
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
		case '[', '{':
			depth++
			if depth > max {
				return errorf(ErrTooDeep, "more than %d levels", max)
			}
		case ']', '}':
			depth--
		}
	}
	return nil
}

// ParsePOST parses a POST body: one JSON object, or an array of them
// (bulk). params are the query string's parameters; a request's "config"
// object overrides them. A bulk item that is not a valid request is
// returned as an error in its place (errs[i]); an error return means the
// body as a whole is unusable.
func ParsePOST(body []byte, params Params, lim Limits) (reqs []*Request, errs []error, bulk bool, err error) {
	if lim.MaxDepth > 0 {
		if err := CheckJSONDepth(body, lim.MaxDepth); err != nil {
			return nil, nil, false, err
		}
	}
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil, nil, false, errorf(ErrBadRequest, "empty body")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var raw any
	if err := dec.Decode(&raw); err != nil {
		return nil, nil, false, errorf(ErrBadRequest, "invalid JSON: %v", err)
	}
	if dec.More() {
		return nil, nil, false, errorf(ErrBadRequest, "invalid JSON: data after the request")
	}
	var items []any
	switch v := raw.(type) {
	case map[string]any:
		items = []any{v}
	case []any:
		bulk = true
		items = v
		if lim.MaxBulk > 0 && len(items) > lim.MaxBulk {
			return nil, nil, true, errorf(ErrTooMany, "%d requests, at most %d", len(items), lim.MaxBulk)
		}
	default:
		return nil, nil, false, errorf(ErrBadRequest, "body is neither a JSON object nor an array")
	}
	reqs = make([]*Request, len(items))
	errs = make([]error, len(items))
	for i, it := range items {
		m, ok := it.(map[string]any)
		if !ok {
			if !bulk {
				return nil, nil, false, errorf(ErrBadRequest, "request is not a JSON object")
			}
			errs[i] = errorf(ErrBadRequest, "bulk item %d is not a JSON object", i)
			continue
		}
		r, perr := requestFromJSON(m, params)
		if perr != nil && isParamError(perr) {
			return nil, nil, bulk, perr
		}
		reqs[i], errs[i] = r, perr
	}
	return reqs, errs, bulk, nil
}

func isParamError(err error) bool { return errors.Is(err, ErrBadParam) }

func requestFromJSON(m map[string]any, params Params) (*Request, error) {
	r := &Request{Params: params}
	str := func(k string) (string, error) {
		v, ok := m[k]
		if !ok || v == nil {
			return "", nil
		}
		s, ok := v.(string)
		if !ok {
			return "", errorf(ErrBadRequest, "%q must be a string", k)
		}
		return s, nil
	}
	ts, err := str("type")
	if err != nil {
		return nil, err
	}
	if ts == "" {
		return nil, errorf(ErrBadRequest, "no request type")
	}
	if r.Type, err = ParseType(ts); err != nil {
		return nil, err
	}
	if c, ok := m["config"]; ok && c != nil {
		cm, ok := c.(map[string]any)
		if !ok {
			return nil, errorf(ErrBadParam, "config must be an object")
		}
		for k, v := range cm {
			var s string
			switch v := v.(type) {
			case string:
				s = v
			case json.Number:
				s = v.String()
			case bool:
				s = strconv.FormatBool(v)
			default:
				return nil, errorf(ErrBadParam, "config %q: want a string, number or boolean", k)
			}
			if err := r.Params.set(k, s); err != nil {
				return nil, err
			}
		}
	}
	if r.MBean, err = str("mbean"); err != nil {
		return nil, err
	}
	switch a := m["attribute"].(type) {
	case nil:
	case string:
		r.Attributes = []string{a}
	case []any:
		r.MultiAttr = true
		for _, x := range a {
			s, ok := x.(string)
			if !ok {
				return nil, errorf(ErrBadRequest, "attribute list must hold strings")
			}
			r.Attributes = append(r.Attributes, s)
		}
	default:
		return nil, errorf(ErrBadRequest, "attribute must be a string or a list")
	}
	if r.Operation, err = str("operation"); err != nil {
		return nil, err
	}
	r.Value = m["value"]
	switch a := m["arguments"].(type) {
	case nil:
	case []any:
		r.Arguments = a
	default:
		return nil, errorf(ErrBadRequest, "arguments must be a list")
	}
	if r.RawPath, err = str("path"); err != nil {
		return nil, err
	}
	if r.Path, err = ParseInnerPath(r.RawPath); err != nil {
		return nil, err
	}
	switch r.Type {
	case TypeRead, TypeSearch:
		if r.MBean == "" {
			return nil, errorf(ErrBadRequest, "%v: no mbean", r.Type)
		}
	case TypeWrite:
		if r.MBean == "" || len(r.Attributes) != 1 {
			return nil, errorf(ErrBadRequest, "write: want mbean and one attribute")
		}
		if _, ok := m["value"]; !ok {
			return nil, errorf(ErrBadRequest, "write: no value")
		}
	case TypeExec:
		if r.MBean == "" || r.Operation == "" {
			return nil, errorf(ErrBadRequest, "exec: want mbean and operation")
		}
	}
	return r, r.parseName()
}
