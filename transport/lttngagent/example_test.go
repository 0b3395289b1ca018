package lttngagent_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/tadpole-trace/tadpole/transport/lttngagent"
)

// loggers is a minimal Handler: fixed logger names, enables counted per
// connection.
type loggers struct {
	names   []string
	enabled map[*lttngagent.Conn]map[string]int
}

func (l *loggers) List(*lttngagent.Conn) []string { return l.names }

func (l *loggers) Enable(c *lttngagent.Conn, ev lttngagent.Event) lttngagent.ReplyCode {
	if l.enabled[c] == nil {
		l.enabled[c] = make(map[string]int)
	}
	l.enabled[c][ev.Name]++
	return lttngagent.ReplySuccess
}

func (l *loggers) Disable(c *lttngagent.Conn, name string) lttngagent.ReplyCode {
	if l.enabled[c][name] == 0 {
		return lttngagent.ReplyUnknownName
	}
	l.enabled[c][name]--
	return lttngagent.ReplySuccess
}

func (l *loggers) AppContext(*lttngagent.Conn, bool, string, string) lttngagent.ReplyCode {
	return lttngagent.ReplySuccess
}

func (l *loggers) Closed(c *lttngagent.Conn) { delete(l.enabled, c) }

// A host registers with whatever session daemons run and waits at most a
// second for them; without LTTng it continues at once. (A real handler is
// called from two connections at once and must lock; this one is used by
// one daemon at most.)
func ExampleNewClient() {
	cfg := lttngagent.DefaultConfig()
	cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	h := &loggers{names: []string{"org.example.A"}, enabled: make(map[*lttngagent.Conn]map[string]int)}
	c, err := lttngagent.NewClient(&cfg, h)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = c.WaitRegistered(ctx) // nil, ErrNoDaemon or a timeout: never fatal
}

func ExampleDialect_AppendListReply() {
	b, n := lttngagent.Dialect20.AppendListReply(nil, []string{"org.example.A", "org.example.B"})
	fmt.Printf("%d names: %x\n", n, b)
	// Output:
	// 2 names: 000000010000001c000000026f72672e6578616d706c652e41006f72672e6578616d706c652e4200
}
