package agent

import (
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tadpole-trace/tadpole/internal/host"
	"github.com/tadpole-trace/tadpole/transport/j4p"
)

// TestManagementPlatformBeans: an MBean server plugged in with
// SetPlatformMBeans (a JVM's, in package jni) is served beside tadpole's
// beans and the host registry's: reads, writes and execs reach it for the
// names the others lack, search merges all three, and the host registry
// wins for a name both hold.
func TestManagementPlatformBeans(t *testing.T) {
	platform := j4p.NewRegistry()
	var count atomic.Int64 // read and written by the server's goroutines
	bean := &j4p.StaticBean{
		Attrs: []j4p.Attr{{Name: "Count", Type: "long", Get: func() (any, error) { return count.Load(), nil },
			Set: func(v any) error { count.Store(v.(int64)); return nil }}},
		Ops: []j4p.Op{{Name: "inc", Ret: "long", Call: func([]any) (any, error) { return count.Add(1), nil }}},
	}
	if err := platform.Register(mustName(t, "java.lang:type=Counter"), bean); err != nil {
		t.Fatal(err)
	}
	shadow := &j4p.StaticBean{Attrs: []j4p.Attr{{Name: "Count", Type: "long", Get: func() (any, error) { return int64(-1), nil }}}}
	if err := platform.Register(mustName(t, "app:type=Shop"), shadow); err != nil {
		t.Fatal(err)
	}
	host.SetPlatformMBeans(platform)
	defer host.SetPlatformMBeans(nil)

	m := startManagement(t, "j4p=127.0.0.1:0,j4p_write=on")
	if err := m.Registry().Register(mustName(t, "app:type=Shop"), &j4pStaticBean); err != nil {
		t.Fatal(err)
	}
	if v := j4pValue(t, m, "write/java.lang:type=Counter/Count/5", nil); v != 0.0 {
		t.Errorf("write: old value %v; want 0", v)
	}
	if v := j4pValue(t, m, "exec/java.lang:type=Counter/inc", nil); v != 6.0 {
		t.Errorf("exec inc = %v; want 6", v)
	}
	if v := j4pValue(t, m, "read/java.lang:type=Counter/Count", nil); v != 6.0 {
		t.Errorf("read = %v; want 6", v)
	}
	if v := j4pValue(t, m, "read/app:type=Shop/Orders", nil); v != 42.0 {
		t.Errorf("host bean behind a platform bean of the same name = %v; want 42", v)
	}
	all := fmt.Sprint(j4pValue(t, m, "search/*:*", nil))
	for _, n := range []string{AgentMBeanName, "java.lang:type=Counter", "app:type=Shop"} {
		if strings.Count(all, n+" ")+strings.Count(all, n+"]") != 1 {
			t.Errorf("search *:* = %s; want %s once", all, n)
		}
	}
	host.SetPlatformMBeans(nil)
	if r := j4pCall(t, m, "read/java.lang:type=Counter/Count", nil); r["status"] != 404.0 {
		t.Errorf("read after host.SetPlatformMBeans(nil): %v; want 404", r)
	}
}
