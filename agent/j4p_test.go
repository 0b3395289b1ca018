package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/internal/testhq"
	"github.com/tadpole-trace/tadpole/transport/j4p"
)

func startManagement(t *testing.T, opts string) *Management {
	t.Helper()
	cfg := DefaultConfig()
	if err := cfg.ParseOptions(opts); err != nil {
		t.Fatal(err)
	}
	m, err := StartManagement(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		m.Shutdown(ctx)
	})
	return m
}

// j4pCall sends one request (a GET path, or a POST body when body is not
// nil) and returns the JSON response.
func j4pCall(t *testing.T, m *Management, path string, body any) map[string]any {
	t.Helper()
	url := "http://" + m.Addr().String() + "/jolokia/" + path
	var resp *http.Response
	var err error
	if body != nil {
		b, _ := json.Marshal(body)
		resp, err = http.Post(url, "application/json", bytes.NewReader(b))
	} else {
		resp, err = http.Get(url)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("%s: HTTP %d, not JSON: %v", path, resp.StatusCode, err)
	}
	return out
}

func j4pValue(t *testing.T, m *Management, path string, body any) any {
	t.Helper()
	r := j4pCall(t, m, path, body)
	if r["status"] != 200.0 {
		t.Fatalf("%s %v: %v", path, body, r)
	}
	return r["value"]
}

func TestManagementOff(t *testing.T) {
	m, err := StartManagement(DefaultConfig())
	if m != nil || err != nil {
		t.Fatalf("StartManagement without j4p = %v, %v; want nil, nil", m, err)
	}
}

func TestManagementBadSettings(t *testing.T) {
	cfg := DefaultConfig()
	cfg.J4P = "127.0.0.1:0"
	cfg.J4PPolicy = filepath.Join(t.TempDir(), "missing.xml")
	if _, err := StartManagement(cfg); !errors.Is(err, ErrManagement) {
		t.Errorf("missing policy: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.xml")
	os.WriteFile(bad, []byte("<restrict><commands><command>fly</command></commands></restrict>"), 0o600)
	cfg.J4PPolicy = bad
	if _, err := StartManagement(cfg); !errors.Is(err, ErrManagement) {
		t.Errorf("bad policy: %v", err)
	}
	cfg.J4PPolicy = ""
	cfg.J4P = "0.0.0.0:0"
	if _, err := StartManagement(cfg); !errors.Is(err, ErrManagement) {
		t.Errorf("wildcard address without authentication: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	cfg.J4P = ln.Addr().String()
	if _, err := StartManagement(cfg); !errors.Is(err, ErrManagement) {
		t.Errorf("port in use: %v", err)
	}
}

func TestManagementWithoutRun(t *testing.T) {
	RegisterLogger("j4ptest.idle")
	m := startManagement(t, "j4p=127.0.0.1:0")
	if v := j4pValue(t, m, "read/io.tadpole:type=Agent/Mode", nil); v != "Off" {
		t.Errorf("Mode without a run = %v", v)
	}
	if v := j4pValue(t, m, "read/io.tadpole:type=Agent/Events", nil); v != 0.0 {
		t.Errorf("Events without a run = %v", v)
	}
	// Write and exec are refused without j4p_write.
	r := j4pCall(t, m, "exec/io.tadpole:type=Agent/flush", nil)
	if r["status"] != 403.0 {
		t.Errorf("exec without j4p_write: %v", r)
	}
	names := j4pValue(t, m, "search/io.tadpole:type=Logger,*", nil).([]any)
	if !slices.Contains(names, any("io.tadpole:type=Logger,name=j4ptest.idle")) {
		t.Errorf("search of loggers = %v", names)
	}
	odd := RegisterLogger("we*ird \"name\"\\x?")
	if v := j4pValue(t, m, "", map[string]any{"type": "read", "mbean": LoggerMBeanName(odd.Name()), "attribute": "Name"}); v != odd.Name() {
		t.Errorf("logger %q read as %v", odd.Name(), v)
	}
	list := j4pValue(t, m, "list/io.tadpole/type=Agent/op", nil).(map[string]any)
	if _, ok := list["mark"]; !ok {
		t.Errorf("list of the agent's operations = %v", list)
	}
}

func TestManagementBeans(t *testing.T) {
	l := RegisterLogger("j4ptest.app,odd=name")
	h := startHQ(t, nil)
	cfg := testConfig(h.Srv.Addr())
	a, run := startAgent(t, h, cfg)
	m := startManagement(t, "j4p=127.0.0.1:0,j4p_write=on")

	if v := j4pValue(t, m, "read/io.tadpole:type=Agent/Mode", nil); v != "Tracing" {
		t.Errorf("Mode = %v", v)
	}
	if v := j4pValue(t, m, "read/io.tadpole:type=Agent/HQ", nil); v != cfg.HQ {
		t.Errorf("HQ = %v; want %s", v, cfg.HQ)
	}
	meth := NewMethod("t/J4P.run;1;()V")
	for i := 0; i < 100; i++ {
		meth.Enter().Exit()
	}
	if v := j4pValue(t, m, "exec/io.tadpole:type=Agent/flush", nil); v != true {
		t.Errorf("flush = %v", v)
	}
	agent := j4pValue(t, m, "read/io.tadpole:type=Agent", nil).(map[string]any)
	if agent["Events"].(float64) < 200 || agent["Bytes"].(float64) < 200*8 || agent["RingPending"] != 0.0 || agent["Connected"] != true || agent["DataConnections"].(float64) < 1 {
		t.Errorf("agent after flush = %v", agent)
	}
	// POST, as jolokia.js sends it; the logger name is quoted in the MBean name.
	name := LoggerMBeanName(l.Name())
	if name != `io.tadpole:type=Logger,name="j4ptest.app,odd=name"` {
		t.Errorf("LoggerMBeanName = %s", name)
	}
	j4pValue(t, m, "", map[string]any{"type": "exec", "mbean": name, "operation": "disable"})
	if l.Enabled() || j4pValue(t, m, "", map[string]any{"type": "read", "mbean": name, "attribute": "Override"}) != "off" {
		t.Errorf("logger still enabled after disable")
	}
	j4pValue(t, m, "", map[string]any{"type": "exec", "mbean": name, "operation": "enable"})
	if !l.Enabled() || j4pValue(t, m, "", map[string]any{"type": "read", "mbean": name, "attribute": "Enabled"}) != true {
		t.Errorf("logger not enabled after enable")
	}
	if v := j4pValue(t, m, "", map[string]any{"type": "read", "mbean": name, "attribute": "EnabledByLTTng"}); v != false {
		t.Errorf("EnabledByLTTng = %v", v)
	}
	j4pValue(t, m, "", map[string]any{"type": "exec", "mbean": name, "operation": "reset"})
	if l.Override() != OverrideNone {
		t.Errorf("override after reset = %v", l.Override())
	}
	j4pValue(t, m, "", map[string]any{"type": "exec", "mbean": AgentMBeanName, "operation": "mark", "arguments": []any{"from", "j4p"}})
	rep := finish(t, a, run)
	c := h.Collector(0)
	testhq.CheckClean(t, rep, c, 201)
	if got := marks(c); !slices.Contains(got, "from=j4p") {
		t.Errorf("markers %v lack from=j4p", got)
	}
	if v := j4pValue(t, m, "read/io.tadpole:type=Agent/Mode", nil); v != "Off" {
		t.Errorf("Mode after shutdown = %v", v)
	}
}

func TestManagementHostBeans(t *testing.T) {
	m := startManagement(t, "j4p=127.0.0.1:0")
	err := m.Registry().Register(mustName(t, "app:type=Shop"), &j4pStaticBean)
	if err != nil {
		t.Fatal(err)
	}
	if v := j4pValue(t, m, "read/app:type=Shop/Orders", nil); v != 42.0 {
		t.Errorf("host bean = %v", v)
	}
}

var j4pStaticBean = j4p.StaticBean{Attrs: []j4p.Attr{{Name: "Orders", Type: "long", Get: func() (any, error) { return int64(42), nil }}}}

func mustName(t *testing.T, s string) j4p.ObjectName {
	n, err := j4p.ParseObjectName(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestManagementDialect030(t *testing.T) {
	m := startManagement(t, "j4p=127.0.0.1:0,j4p_dialect=j4p030")
	base := "http://" + m.Addr().String() + "/j4p/"
	resp, err := http.Get(base + "version")
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	json.NewDecoder(resp.Body).Decode(&v)
	resp.Body.Close()
	if v["value"] != agentVersion || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Errorf("0.30 version: %v, %s", v, resp.Header.Get("Content-Type"))
	}
	resp, err = http.Get(base + "search/nope:*")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("0.30 empty search: HTTP %d; want 404", resp.StatusCode)
	}
}

func TestLoggerOverride(t *testing.T) {
	defer SetLogPolicy(LogsAuto)
	l := RegisterLogger("j4ptest.override")
	defer l.SetOverride(OverrideNone)
	var seen []bool
	remove := AddLoggerHook(func(hl *Logger, on bool) {
		if hl == l {
			seen = append(seen, on)
		}
	})
	defer remove()
	tests := []struct {
		policy LogPolicy
		o      LoggerOverride
		want   bool
	}{
		{LogsNone, OverrideNone, false},
		{LogsNone, OverrideOn, true},
		{LogsAll, OverrideOn, true},
		{LogsAll, OverrideOff, false},
		{LogsAll, OverrideNone, true},
	}
	for _, tt := range tests {
		SetLogPolicy(tt.policy)
		l.SetOverride(tt.o)
		if got := l.enabled.Load(); got != tt.want {
			t.Errorf("policy %v, override %v: enabled %v; want %v", tt.policy, tt.o, got, tt.want)
		}
		if acc := l.Accept(); (acc.Kind == AcceptAll) != tt.want {
			t.Errorf("policy %v, override %v: Accept %v", tt.policy, tt.o, acc)
		}
	}
	if len(seen) == 0 || seen[len(seen)-1] != true {
		t.Errorf("logger hook saw %v", seen)
	}
	if OverrideOff.String() != "off" || LoggerOverride(9).String() != "UNKNOWN_OVERRIDE_9" {
		t.Error("LoggerOverride.String")
	}
}
