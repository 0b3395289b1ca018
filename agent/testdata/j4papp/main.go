// Command j4papp is the Go program of the agent's Jolokia client tests: it
// starts the management endpoint as a Go service would (configuration from
// TADPOLE_* variables, e.g. TADPOLE_J4P=127.0.0.1:0), registers a logger
// and two beans of its own, prints "j4p <address>" on standard output and
// serves until its standard input closes.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/tadpole-trace/tadpole/agent"
	"github.com/tadpole-trace/tadpole/transport/j4p"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "j4papp:", err)
		os.Exit(1)
	}
}

// memory is a bean shaped like the JVM's java.lang:type=Memory.
type memory struct {
	mu      sync.Mutex
	verbose bool
	gcs     int64
}

func (m *memory) bean() *j4p.StaticBean {
	return &j4p.StaticBean{
		Class: "sun.management.MemoryImpl",
		Attrs: []j4p.Attr{
			{Name: "HeapMemoryUsage", Type: "javax.management.openmbean.CompositeData", Desc: "HeapMemoryUsage", Get: func() (any, error) {
				return map[string]any{"init": int64(134217728), "used": int64(15348352), "committed": int64(18292736), "max": int64(532742144)}, nil
			}},
			{Name: "Verbose", Type: "boolean", Desc: "Verbose", Get: func() (any, error) {
				m.mu.Lock()
				defer m.mu.Unlock()
				return m.verbose, nil
			}, Set: func(v any) error {
				m.mu.Lock()
				defer m.mu.Unlock()
				m.verbose = v.(bool)
				return nil
			}},
			{Name: "GCCount", Type: "long", Desc: "gc calls", Get: func() (any, error) {
				m.mu.Lock()
				defer m.mu.Unlock()
				return m.gcs, nil
			}},
		},
		Ops: []j4p.Op{{Name: "gc", Ret: "void", Desc: "gc", Call: func([]any) (any, error) {
			m.mu.Lock()
			m.gcs++
			m.mu.Unlock()
			return nil, nil
		}}},
	}
}

func shop() *j4p.StaticBean {
	return &j4p.StaticBean{
		Class: "app.Shop",
		Attrs: []j4p.Attr{
			{Name: "Stock", Type: "java.util.Map", Get: func() (any, error) {
				return map[string]any{"apples": []any{int64(3), int64(5)}, "pears": map[string]any{"ripe": true}}, nil
			}},
		},
		Ops: []j4p.Op{
			{Name: "price", Ret: "long", Args: []j4p.ArgInfo{{Name: "item", Type: "java.lang.String"}, {Name: "qty", Type: "int"}},
				Call: func(a []any) (any, error) { return int64(len(a[0].(string))) * a[1].(int64), nil }},
			{Name: "echo", Ret: "java.lang.String", Args: []j4p.ArgInfo{{Name: "s", Type: "java.lang.String"}},
				Call: func(a []any) (any, error) {
					if a[0] == nil {
						return "null", nil
					}
					return a[0], nil
				}},
		},
	}
}

func run() error {
	cfg, err := agent.LoadConfig("")
	if err != nil {
		return err
	}
	agent.RegisterLogger("app.orders")
	m, err := agent.StartManagement(cfg)
	if err != nil {
		return err
	}
	if m == nil {
		return fmt.Errorf("TADPOLE_J4P is not set")
	}
	mem := &memory{}
	if err := m.Registry().Register(j4p.MustObjectName("java.lang:type=Memory"), mem.bean()); err != nil {
		return err
	}
	if err := m.Registry().Register(j4p.MustObjectName("app:type=Shop,name=main"), shop()); err != nil {
		return err
	}
	fmt.Printf("j4p %s\n", m.Addr())
	io.Copy(io.Discard, os.Stdin)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return m.Shutdown(ctx)
}
