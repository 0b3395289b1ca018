package lttngagent

import (
	"bytes"
	"testing"
)

// BenchmarkParseRequest decodes each command of the golden vectors: header
// and payload.
func BenchmarkParseRequest(b *testing.B) {
	v := loadVectors(b)
	for _, name := range []string{
		"cmd_list",
		"cmd_enable_org.example.B_loglevel-only_SEVERE_filter",
		"cmd_enable_all",
		"cmd_disable_org.example.A",
		"cmd_app_ctx_enable_myprov_myctx",
	} {
		raw := v[name]
		var r Request
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(raw)))
			for i := 0; i < b.N; i++ {
				h, err := Dialect20.ParseHeader(raw)
				if err != nil {
					b.Fatal(err)
				}
				if err := Dialect20.ParseRequest(&r, h, raw[headerSize20:]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkAppendListReply(b *testing.B) {
	names := []string{"org.example.A", "org.example.B", "org.example.service.impl.OrderProcessor", "global.x"}
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		buf, _ = Dialect20.AppendListReply(buf[:0], names)
	}
}

// BenchmarkServe measures a whole command round trip through a session:
// header read, decode, handler call, reply.
func BenchmarkServe(b *testing.B) {
	raw, _ := Dialect20.AppendRequest(nil, &Request{Cmd: CmdEnable, Event: Event{
		Name: "org.example.A", LogLevel: 800, LogLevelType: LogLevelRange,
		Filter: `(logger_name == "org.example.A") && (int_loglevel >= 800)`}})
	stream := make([]byte, 0, len(raw)*b.N)
	for i := 0; i < b.N; i++ {
		stream = append(stream, raw...)
	}
	cfg := DefaultConfig().withDefaults()
	c := &Client{cfg: cfg, h: &countingHandler{}, changed: make(chan struct{})}
	nc := &memConn{r: bytes.NewReader(stream), w: discard{}}
	s := newSession(c, &Conn{dialect: Dialect20, domain: DomainJUL}, nc, newProblemLog(cfg.Logger))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s.serveOne(); err != nil {
			b.Fatal(err)
		}
	}
}

type discard struct{}

func (discard) Write(b []byte) (int, error) { return len(b), nil }
