package j4p

import (
	"encoding/json"
	"strings"
	"testing"
)

type respCase struct {
	name         string
	method       string
	target, body string
	httpCode     int
	status       int    // JSON status; 0 when not JSON
	value        string // the JSON of value, when not ""
	errType      string
	errHas       string
}

func runCases(t *testing.T, h *Handler, cases []respCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.method
			if m == "" {
				m = "GET"
			}
			w := do(h, m, tc.target, tc.body)
			if w.Code != tc.httpCode {
				t.Fatalf("HTTP %d; want %d (%s)", w.Code, tc.httpCode, w.Body.String())
			}
			if tc.status == 0 {
				return
			}
			resp, ok := decode(t, w).(map[string]any)
			if !ok {
				t.Fatalf("response is not an object")
			}
			if got := jsonText(resp["status"]); got != jsonText(tc.status) {
				t.Fatalf("status %s; want %d: %s", got, tc.status, jsonText(resp))
			}
			if tc.value != "" {
				if got := jsonText(resp["value"]); got != tc.value {
					t.Errorf("value %s; want %s", got, tc.value)
				}
			}
			if tc.errType != "" && resp["error_type"] != tc.errType {
				t.Errorf("error_type %v; want %s", resp["error_type"], tc.errType)
			}
			if tc.errHas != "" && !strings.Contains(jsonText(resp["error"]), tc.errHas) {
				t.Errorf("error %v; want it to hold %q", resp["error"], tc.errHas)
			}
			if _, ok := resp["stacktrace"]; ok {
				t.Errorf("stacktrace sent by default")
			}
		})
	}
}

func TestHandlerJolokia2(t *testing.T) {
	h, _ := newTestHandler(t, nil)
	const ex = "/jolokia/"
	runCases(t, h, []respCase{
		{name: "read", target: ex + "read/java.lang:type=Memory/HeapMemoryUsage", httpCode: 200, status: 200,
			value: `{"committed":18292736,"init":134217728,"max":532742144,"used":15348352}`},
		{name: "read path", target: ex + "read/java.lang:type=Memory/HeapMemoryUsage/used", httpCode: 200, status: 200, value: `15348352`},
		{name: "read encoded", target: ex + "read/java.lang%3Atype%3DMemory/HeapMemoryUsage/max", httpCode: 200, status: 200, value: `532742144`},
		{name: "read escaped slash", target: ex + "read/jboss.jmx%3Aalias%3Djmx!%2Frmi!%2FRMIAdaptor/State", httpCode: 200, status: 200, value: `"Started"`},
		{name: "read p=", target: ex + "?p=/read/jboss.jmx:alias=jmx!/rmi!/RMIAdaptor/State", httpCode: 200, status: 200, value: `"Started"`},
		{name: "read list index", target: ex + "read/test:type=Calc,name=a/Names/1", httpCode: 200, status: 200, value: `"y"`},
		{name: "read struct", target: ex + "read/test:type=Calc,name=a/Point", httpCode: 200, status: 200, value: `{"X":1,"Y":2,"label":"p"}`},
		{name: "read objectname", target: ex + "read/test:type=Calc,name=a/Self", httpCode: 200, status: 200, value: `{"objectName":"test:type=Calc,name=a"}`},
		{name: "read wildcard path", target: ex + "read/java.lang:type=Memory/HeapMemoryUsage/*", httpCode: 200, status: 200},
		{name: "read maxDepth", target: ex + "read/test:type=Calc,name=a/Deep?maxDepth=2", httpCode: 200, status: 200, value: `{"a":{"b":"[Depth limit map[c:map[d:1]]]"}}`},
		{name: "read maxCollectionSize", target: ex + "read/test:type=Calc,name=a/Names?maxCollectionSize=2", httpCode: 200, status: 200, value: `["x","y"]`},
		{name: "read maxObjects", target: ex + "read/test:type=Calc,name=a/Deep?maxObjects=2", httpCode: 200, status: 200, value: `{"a":{"b":"[Object limit exceeded]"}}`},
		{name: "read multi", target: ex + "read/java.lang:type=Memory/Verbose,ObjectPendingFinalizationCount", httpCode: 200, status: 200, value: `{"ObjectPendingFinalizationCount":0,"Verbose":false}`},
		{name: "read all", target: ex + "read/test:type=Calc,name=b", httpCode: 200, status: 200, value: `{"Counter":7}`},
		{name: "read all as *", target: ex + "read/test:type=Calc,name=b/*", httpCode: 200, status: 200, value: `{"Counter":7}`},
		{name: "read pattern", target: ex + "read/test:type=Calc,*/Counter", httpCode: 200, status: 200, value: `{"test:type=Calc,name=a":{"Counter":0},"test:type=Calc,name=b":{"Counter":7}}`},
		{name: "read pattern canonical", target: ex + "read/test:type=Calc,*/Counter?canonicalNaming=true", httpCode: 200, status: 200, value: `{"test:name=a,type=Calc":{"Counter":0},"test:name=b,type=Calc":{"Counter":7}}`},
		{name: "read no mbean", target: ex + "read/java.lang:type=Nope/X", httpCode: 200, status: 404, errType: "javax.management.InstanceNotFoundException"},
		{name: "read no attribute", target: ex + "read/java.lang:type=Memory/Nope", httpCode: 200, status: 404, errType: "javax.management.AttributeNotFoundException"},
		{name: "read bad path", target: ex + "read/java.lang:type=Memory/HeapMemoryUsage/nope", httpCode: 200, status: 404},
		{name: "read failing", target: ex + "read/test:type=Calc,name=a/Broken", httpCode: 200, status: 500, errHas: "sensor offline"},
		{name: "read ignoreErrors", target: ex + "read/test:type=Calc,name=a/Counter,Broken?ignoreErrors=true", httpCode: 200, status: 200, value: `{"Broken":"ERROR: sensor offline","Counter":0}`},
		{name: "bad object name", target: ex + "read/nocolon/X", httpCode: 200, status: 400, errType: "javax.management.MalformedObjectNameException"},
		{name: "bad escape", target: ex + "read/java.lang:type=Memory/Verbose!", httpCode: 200, status: 400},
		{name: "unknown type", target: ex + "frobnicate/x", httpCode: 200, status: 400, errType: "java.lang.UnsupportedOperationException"},
		{name: "missing args", target: ex + "read", httpCode: 200, status: 400},
		{name: "search", target: ex + "search/*:type=Calc,*", httpCode: 200, status: 200, value: `["test:type=Calc,name=a","test:type=Calc,name=b"]`},
		{name: "search canonical", target: ex + "search/*:type=Calc,*?canonicalNaming=true", httpCode: 200, status: 200, value: `["test:name=a,type=Calc","test:name=b,type=Calc"]`},
		{name: "search none", target: ex + "search/nope:*", httpCode: 200, status: 200, value: `[]`},
		{name: "list mbean", target: ex + "list/java.lang/type=Memory/op", httpCode: 200, status: 200, value: `{"gc":{"args":[],"desc":"gc","ret":"void"}}`},
		{name: "list attr", target: ex + "list/java.lang/type=Memory/attr/Verbose", httpCode: 200, status: 200, value: `{"desc":"Verbose","rw":true,"type":"boolean"}`},
		{name: "list maxDepth", target: ex + "list?maxDepth=1", httpCode: 200, status: 200, value: `{"java.lang":1,"jboss.jmx":1,"test":1}`},
		{name: "list overload", target: ex + "list/test/type=Calc,name=a/op/add", httpCode: 200, status: 200,
			value: `[{"args":[{"desc":"","name":"a","type":"int"},{"desc":"","name":"b","type":"int"}],"desc":"","ret":"int"},{"args":[{"desc":"","name":"a","type":"long"},{"desc":"","name":"b","type":"long"},{"desc":"","name":"c","type":"long"}],"desc":"","ret":"long"}]`},
		{name: "list key order", target: ex + "list/test/name=b,type=Calc", httpCode: 200, status: 200},
		{name: "list no domain", target: ex + "list/nope", httpCode: 200, status: 404},
		{name: "list key pattern", target: ex + "list/test/type=Calc,*/attr/Counter/type", httpCode: 200, status: 200, value: `{"test":{"type=Calc,name=a":"long","type=Calc,name=b":"long"}}`},
		{name: "list domain pattern", target: ex + "list/j*?maxDepth=2", httpCode: 200, status: 200, value: `{"java.lang":{"type=Memory":1},"jboss.jmx":{"alias=jmx/rmi/RMIAdaptor":1}}`},
		{name: "version", target: ex + "version", httpCode: 200, status: 200},
		{name: "version bare", target: "/jolokia", httpCode: 200, status: 200},
		{name: "write refused", target: ex + "write/java.lang:type=Memory/Verbose/true", httpCode: 200, status: 403, errType: "java.lang.SecurityException"},
		{name: "exec refused", target: ex + "exec/java.lang:type=Memory/gc", httpCode: 200, status: 403},
		{name: "bad param", target: ex + "read/java.lang:type=Memory/Verbose?maxDepth=x", httpCode: 400},
		{name: "bad mime", target: ex + "version?mimeType=text/html", httpCode: 400},
		{name: "outside base", target: "/other/version", httpCode: 404},
		{name: "base prefix only", target: "/jolokiax/version", httpCode: 404},
		{name: "bad json", method: "POST", target: ex, body: `{"type":`, httpCode: 400},
		{name: "json scalar", method: "POST", target: ex, body: `42`, httpCode: 400},
		{name: "post read", method: "POST", target: ex, body: `{"type":"READ","mbean":"java.lang:type=Memory","attribute":"HeapMemoryUsage","path":"used"}`, httpCode: 200, status: 200, value: `15348352`},
		{name: "post config", method: "POST", target: ex + "?maxCollectionSize=1", body: `{"type":"read","mbean":"test:type=Calc,name=a","attribute":"Names","config":{"maxCollectionSize":2}}`, httpCode: 200, status: 200, value: `["x","y"]`},
		{name: "post query param", method: "POST", target: ex + "?maxCollectionSize=1", body: `{"type":"read","mbean":"test:type=Calc,name=a","attribute":"Names"}`, httpCode: 200, status: 200, value: `["x"]`},
		{name: "post bad config", method: "POST", target: ex, body: `{"type":"read","mbean":"a:b=c","attribute":"X","config":{"maxDepth":"deep"}}`, httpCode: 400},
		{name: "post multi attr", method: "POST", target: ex, body: `{"type":"read","mbean":"java.lang:type=Memory","attribute":["Verbose"]}`, httpCode: 200, status: 200, value: `{"Verbose":false}`},
		{name: "post no type", method: "POST", target: ex, body: `{"mbean":"java.lang:type=Memory"}`, httpCode: 200, status: 400},
		{name: "method", method: "PUT", target: ex + "version", httpCode: 400},
	})
}

func TestHandlerWriteExec(t *testing.T) {
	h, b := newTestHandler(t, func(c *Config) { c.AllowWrite, c.AllowExec = true, true })
	const ex = "/jolokia/"
	runCases(t, h, []respCase{
		{name: "write", target: ex + "write/java.lang:type=Memory/Verbose/true", httpCode: 200, status: 200, value: `false`},
		{name: "write again", target: ex + "write/java.lang:type=Memory/Verbose/false", httpCode: 200, status: 200, value: `true`},
		{name: "write bad bool", target: ex + "write/java.lang:type=Memory/Verbose/maybe", httpCode: 200, status: 400},
		{name: "write read-only", target: ex + "write/java.lang:type=Memory/ObjectPendingFinalizationCount/1", httpCode: 200, status: 400},
		{name: "write long", target: ex + "write/test:type=Calc,name=a/Counter/42", httpCode: 200, status: 200, value: `0`},
		{name: "write post", method: "POST", target: ex, body: `{"type":"write","mbean":"test:type=Calc,name=a","attribute":"Counter","value":43}`, httpCode: 200, status: 200, value: `42`},
		{name: "write inner path", method: "POST", target: ex, body: `{"type":"write","mbean":"test:type=Calc,name=a","attribute":"Conf","value":20,"path":"limits/max"}`, httpCode: 200, status: 200, value: `10`},
		{name: "read inner path", target: ex + "read/test:type=Calc,name=a/Conf/limits/max", httpCode: 200, status: 200, value: `20`},
		{name: "write JSON string", target: ex + "write/test:type=Calc,name=a/Conf/" + `{"level":"debug","limits":{"max":7}}`, httpCode: 200, status: 200},
		{name: "read written JSON", target: ex + "read/test:type=Calc,name=a/Conf/limits/max", httpCode: 200, status: 200, value: `7`},
		{name: "write bad JSON string", target: ex + "write/test:type=Calc,name=a/Conf/{nope", httpCode: 200, status: 400},
		{name: "write POST object", method: "POST", target: ex, body: `{"type":"write","mbean":"test:type=Calc,name=a","attribute":"Conf","value":{"level":"x","limits":{"max":9}}}`, httpCode: 200, status: 200},
		{name: "read written object", target: ex + "read/test:type=Calc,name=a/Conf/limits/max", httpCode: 200, status: 200, value: `9`},
		{name: "write overflow", target: ex + "write/test:type=Calc,name=a/Counter/99999999999999999999", httpCode: 200, status: 400},
		{name: "exec void", target: ex + "exec/java.lang:type=Memory/gc", httpCode: 200, status: 200, value: `null`},
		{name: "exec overload by count", target: ex + "exec/test:type=Calc,name=a/add/1/2", httpCode: 200, status: 200, value: `3`},
		{name: "exec overload 3", target: ex + "exec/test:type=Calc,name=a/add/1/2/3", httpCode: 200, status: 200, value: `6`},
		{name: "exec signature", method: "POST", target: ex, body: `{"type":"exec","mbean":"test:type=Calc,name=a","operation":"add(long,long,long)","arguments":[1,2,3]}`, httpCode: 200, status: 200, value: `6`},
		{name: "exec bad signature", method: "POST", target: ex, body: `{"type":"exec","mbean":"test:type=Calc,name=a","operation":"add(int)","arguments":[1]}`, httpCode: 200, status: 404},
		{name: "exec null and slash", target: ex + "exec/test:type=Calc,name=a/concat/a!%2Fb!!c/%5Bnull%5D", httpCode: 200, status: 200, value: `"a/b!c(null)"`},
		{name: "exec array", target: ex + "exec/test:type=Calc,name=a/sum/1%2C2%2C3", httpCode: 200, status: 200, value: `6`},
		{name: "exec array post", method: "POST", target: ex, body: `{"type":"exec","mbean":"test:type=Calc,name=a","operation":"sum","arguments":[[4,5]]}`, httpCode: 200, status: 200, value: `9`},
		{name: "exec wrong count", target: ex + "exec/java.lang:type=Memory/gc/1", httpCode: 200, status: 400},
		{name: "exec bad int", target: ex + "exec/test:type=Calc,name=a/add/1/x", httpCode: 200, status: 400},
		{name: "exec missing", target: ex + "exec/java.lang:type=Memory/nope", httpCode: 200, status: 404},
		{name: "exec panics", target: ex + "exec/test:type=Calc,name=a/boom", httpCode: 200, status: 500},
		{name: "write pattern", target: ex + "write/test:type=Calc,*/Counter/1", httpCode: 200, status: 400},
	})
	if !b.verbose && b.gcs != 1 {
		t.Errorf("state after writes: verbose %v gcs %d", b.verbose, b.gcs)
	}
}

func TestHandlerBulk(t *testing.T) {
	h, _ := newTestHandler(t, nil)
	body := `[{"type":"read","mbean":"java.lang:type=Memory","attribute":"HeapMemoryUsage","path":"used"},
		{"type":"search","mbean":"*:type=Memory,*"},
		{"type":"read","mbean":"java.lang:type=Nope","attribute":"X"},
		42,
		{"type":"exec","mbean":"java.lang:type=Memory","operation":"gc"},
		{"type":"version"}]`
	w := do(h, "POST", "/jolokia/", body, "Content-Type", "text/json")
	if w.Code != 200 {
		t.Fatalf("HTTP %d: %s", w.Code, w.Body)
	}
	arr, ok := decode(t, w).([]any)
	if !ok || len(arr) != 6 {
		t.Fatalf("want an array of 6, got %s", w.Body)
	}
	want := []string{"200", "200", "404", "400", "403", "200"}
	for i, s := range want {
		if got := jsonText(arr[i].(map[string]any)["status"]); got != s {
			t.Errorf("item %d status %s; want %s", i, got, s)
		}
	}
	if v := jsonText(arr[1].(map[string]any)["value"]); v != `["java.lang:type=Memory"]` {
		t.Errorf("search in bulk = %s", v)
	}
	req := arr[0].(map[string]any)["request"].(map[string]any)
	if req["type"] != "read" || req["mbean"] != "java.lang:type=Memory" || req["path"] != "used" {
		t.Errorf("echoed request %v", req)
	}
}

func TestHandlerResponseShape(t *testing.T) {
	h, _ := newTestHandler(t, nil)
	w := do(h, "GET", "/jolokia/read/java.lang:type=Memory/HeapMemoryUsage/used", "")
	if ct := w.Header().Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	want := `{"request":{"type":"read","mbean":"java.lang:type=Memory","attribute":"HeapMemoryUsage","path":"used"},"value":15348352,"timestamp":1700000000,"status":200}`
	if got := w.Body.String(); got != want {
		t.Errorf("body\n%s\nwant\n%s", got, want)
	}
	w = do(h, "GET", "/jolokia/read/java.lang:type=Memory/Nope?includeRequest=false", "")
	want = `{"error_type":"javax.management.AttributeNotFoundException","error":"j4p: no such attribute: \"Nope\"","status":404}`
	if got := w.Body.String(); got != want {
		t.Errorf("error body\n%s\nwant\n%s", got, want)
	}
	v := decode(t, do(h, "GET", "/jolokia/version", "")).(map[string]any)["value"].(map[string]any)
	if v["protocol"] != ProtocolVersion || v["agent"] != "tadpole" {
		t.Errorf("version value %v", v)
	}
}

func TestHandlerErrorDetails(t *testing.T) {
	h, _ := newTestHandler(t, nil)
	resp := decode(t, do(h, "GET", "/jolokia/read/x:y=z/A?includeStackTrace=true&serializeException=true", "")).(map[string]any)
	if _, ok := resp["stacktrace"]; ok {
		t.Error("stacktrace without AllowErrorDetails")
	}
	if _, ok := resp["error_value"]; ok {
		t.Error("error_value without AllowErrorDetails")
	}
	h, _ = newTestHandler(t, func(c *Config) { c.AllowErrorDetails = true })
	resp = decode(t, do(h, "GET", "/jolokia/read/x:y=z/A?includeStackTrace=true&serializeException=true", "")).(map[string]any)
	if _, ok := resp["stacktrace"]; !ok {
		t.Error("no stacktrace with AllowErrorDetails and includeStackTrace")
	}
	if ev, ok := resp["error_value"].(map[string]any); !ok || ev["type"] != "javax.management.InstanceNotFoundException" {
		t.Errorf("error_value %v", resp["error_value"])
	}
	resp = decode(t, do(h, "GET", "/jolokia/read/x:y=z/A", "")).(map[string]any)
	if _, ok := resp["stacktrace"]; ok {
		t.Error("stacktrace not asked for")
	}
}

func TestHandlerDialect030(t *testing.T) {
	h, _ := newTestHandler(t, func(c *Config) { c.Dialect = Dialect030; c.Base = "/j4p" })
	const ex = "/j4p/"
	runCases(t, h, []respCase{
		{name: "read escaped", target: ex + "read/jboss.jmx:alias=jmx/-/rmi/-/RMIAdaptor/State", httpCode: 200, status: 200, value: `"Started"`},
		{name: "read path", target: ex + "read/java.lang:type=Memory/HeapMemoryUsage/used", httpCode: 200, status: 200, value: `15348352`},
		{name: "version string", target: ex + "version", httpCode: 200, status: 200, value: `"tadpole"`},
		{name: "search none 404", target: ex + "search/nope:*", httpCode: 404, status: 404},
		{name: "not found", target: ex + "read/java.lang:type=Memory/Nope", httpCode: 404, status: 404},
		{name: "denied", target: ex + "exec/java.lang:type=Memory/gc", httpCode: 403, status: 403},
		{name: "bad json", method: "POST", target: ex, body: `[`, httpCode: 400, status: 400},
		{name: "post upper", method: "POST", target: ex, body: `{"type":"SEARCH","mbean":"*:type=Memory,*"}`, httpCode: 200, status: 200, value: `["java.lang:type=Memory"]`},
	})
	w := do(h, "GET", ex+"read/java.lang:type=Memory/Nope", "")
	if ct := w.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("0.30 Content-Type %q", ct)
	}
	var resp map[string]any
	json.Unmarshal(w.Body.Bytes(), &resp)
	if _, ok := resp["error_type"]; ok {
		t.Errorf("0.30 error has error_type: %v", resp)
	}
	if !strings.HasPrefix(resp["error"].(string), "javax.management.AttributeNotFoundException: ") {
		t.Errorf("0.30 error text %q", resp["error"])
	}
}

func TestHandlerMimeAndBulk030(t *testing.T) {
	h, _ := newTestHandler(t, nil)
	w := do(h, "GET", "/jolokia/version?mimeType=text/plain", "")
	if ct := w.Header().Get("Content-Type"); ct != "text/plain; charset=utf-8" {
		t.Errorf("mimeType=text/plain: Content-Type %q", ct)
	}
	h, _ = newTestHandler(t, func(c *Config) { c.Dialect = Dialect030 })
	w = do(h, "POST", "/jolokia/", `[{"type":"read","mbean":"java.lang:type=Nope","attribute":"X"},{"type":"version"}]`)
	if w.Code != 200 {
		t.Errorf("0.30 bulk: HTTP %d; want 200 with statuses per item", w.Code)
	}
	arr := decode(t, w).([]any)
	if len(arr) != 2 || jsonText(arr[0].(map[string]any)["status"]) != "404" || arr[1].(map[string]any)["value"] != "tadpole" {
		t.Errorf("0.30 bulk: %s", w.Body)
	}
}
