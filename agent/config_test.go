package agent

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/tadpole-trace/tadpole/transport/bytefrog"
	"github.com/tadpole-trace/tadpole/transport/j4p"
	"github.com/tadpole-trace/tadpole/transport/lttngagent"
)

func TestParseOptions(t *testing.T) {
	tests := []struct {
		opts  string
		check func(Config) bool
	}{
		{"hq=127.0.0.1:8765", func(c Config) bool { return c.HQ == "127.0.0.1:8765" }},
		{"hq=h:1, connect_timeout=250ms", func(c Config) bool { return c.ConnectTimeout == 250*time.Millisecond }},
		{"hq=unix:/run/tadpole/hq.sock", func(c Config) bool { return c.HQ == "unix:/run/tadpole/hq.sock" }},
		{"hq=@tadpole-hq,data_connections=2", func(c Config) bool { return c.HQ == "@tadpole-hq" && c.DataConnections == 2 }},
		{"hq=", func(c Config) bool { return c.HQ == "" }},
		{"connect-timeout=3", func(c Config) bool { return c.ConnectTimeout == 3*time.Second }},
		{"protocol=2,flavor=codepulse", func(c Config) bool { return c.Version == 2 && c.Flavor == bytefrog.FlavorCodePulse }},
		{"protocol=4,project_id=42", func(c Config) bool { return c.ProjectID == 42 }},
		{"data_connections=8,buffer_budget=1048576", func(c Config) bool { return c.DataConnections == 8 && c.BufferBudget == 1<<20 }},
		{"log_level=debug,log=/tmp/x.log", func(c Config) bool { return c.LogLevel == LevelDebug && c.Log == "/tmp/x.log" }},
		{"lttng_domain=log4j", func(c Config) bool { return c.LTTngDomain == "log4j" }},
		{"lttng_dialect=rfc01", func(c Config) bool { return c.LTTngDialect == lttngagent.DialectRFC01 }},
		{"lttng_dialect=2.13", func(c Config) bool { return c.LTTngDialect == lttngagent.Dialect20 }},
		{"j4p=127.0.0.1:8778", func(c Config) bool { return c.J4P == "127.0.0.1:8778" && !c.J4PWrite }},
		{"j4p=on", func(c Config) bool { return c.J4P == "127.0.0.1:8778" }},
		{"j4p=[::1]:9000,j4p_write=on", func(c Config) bool { return c.J4P == "[::1]:9000" && c.J4PWrite }},
		{"j4p=off", func(c Config) bool { return c.J4P == "" }},
		{"j4p=0.0.0.0:8778,j4p_user=ops,j4p_password=pw", func(c Config) bool {
			return c.J4P == "0.0.0.0:8778" && c.J4PUser == "ops" && c.J4PPassword == "pw"
		}},
		{"j4p_dialect=j4p030", func(c Config) bool { return c.J4PDialect == j4p.Dialect030 }},
		{"j4p_policy=/etc/tadpole/jolokia-access.xml", func(c Config) bool { return c.J4PPolicy == "/etc/tadpole/jolokia-access.xml" }},
		{"logs=lttng", func(c Config) bool { return c.Logs == LogsLTTng && c.LogsTo == LogsToBoth }},
		{"logs=all:lttng", func(c Config) bool { return c.Logs == LogsAll && c.LogsTo == LogsToLTTng }},
		{"logs=auto:hq,lttng_lib=/opt/x.so", func(c Config) bool {
			return c.Logs == LogsAuto && c.LogsTo == LogsToHQ && c.LTTngLib == "/opt/x.so"
		}},
		{"", func(c Config) bool { return c == DefaultConfig() }},
	}
	for _, tt := range tests {
		c := DefaultConfig()
		if err := c.ParseOptions(tt.opts); err != nil {
			t.Errorf("ParseOptions(%q): %v", tt.opts, err)
			continue
		}
		if err := c.Verify(); err != nil {
			t.Errorf("ParseOptions(%q): Verify: %v", tt.opts, err)
		}
		if !tt.check(c) {
			t.Errorf("ParseOptions(%q) gave %+v", tt.opts, c)
		}
	}
}

func TestParseOptionsErrors(t *testing.T) {
	tests := []struct {
		opts  string
		is    error
		names []string
	}{
		{"bogus=1", ErrUnknownOption, []string{"bogus"}},
		{"hq=x:1,colour=red,protocol=9", ErrUnknownOption, []string{"colour", "protocol"}},
		{"hq=x", ErrBadOption, []string{"hq", "host:port, unix:/path or @name"}},
		{"hq=/run/hq.sock", ErrBadOption, []string{"hq", "unix:/path"}},
		{"hq=unix:", ErrBadOption, []string{"hq", "no socket path"}},
		{"hq=unix:/" + strings.Repeat("x", 200), ErrBadOption, []string{"hq", "at most 107 bytes"}},
		{"protocol=9", ErrBadOption, []string{"protocol"}},
		{"flavor=java", ErrBadOption, []string{"flavor"}},
		{"connect_timeout=soon", ErrBadOption, []string{"connect_timeout"}},
		{"data_connections=-1", ErrBadOption, []string{"data_connections"}},
		{"log_level=loud", ErrBadOption, []string{"log_level"}},
		{"lttng_dialect=2.14", ErrBadOption, []string{"lttng_dialect", "2.14"}},
		{"justakey", ErrBadOption, []string{"justakey"}},
		{"j4p=8778", ErrBadOption, []string{"j4p"}},
		{"j4p=host", ErrBadOption, []string{"j4p"}},
		{"j4p_write=maybe", ErrBadOption, []string{"j4p_write"}},
		{"j4p_dialect=jolokia3", ErrBadOption, []string{"j4p_dialect"}},
		{"logs=auto:disk", ErrBadOption, []string{"logs"}},
		{"logs=some:both", ErrBadOption, []string{"logs"}},
	}
	for _, tt := range tests {
		c := DefaultConfig()
		err := c.ParseOptions(tt.opts)
		if !errors.Is(err, tt.is) {
			t.Errorf("ParseOptions(%q) = %v; want %v", tt.opts, err, tt.is)
			continue
		}
		for _, n := range tt.names {
			if !strings.Contains(err.Error(), n) {
				t.Errorf("ParseOptions(%q) error %q does not name %q", tt.opts, err, n)
			}
		}
	}
}

func TestVerify(t *testing.T) {
	for _, opts := range []string{"ring_size=1000", "protocol=2,project_id=3", "flush_interval=0s", "j4p_password=pw"} {
		c := DefaultConfig()
		if err := c.ParseOptions(opts); err != nil {
			t.Fatalf("ParseOptions(%q): %v", opts, err)
		}
		if err := c.Verify(); err == nil {
			t.Errorf("Verify after %q = nil; want an error", opts)
		}
	}
}

func TestApplyEnv(t *testing.T) {
	env := map[string]string{"TADPOLE_HQ": "10.0.0.1:9", "TADPOLE_DATA_CONNECTIONS": "4", "TADPOLE_LTTNG_DIALECT": "rfc01", "TADPOLE_UNRELATED": "x"}
	c := DefaultConfig()
	if err := c.ApplyEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }); err != nil {
		t.Fatal(err)
	}
	if c.HQ != "10.0.0.1:9" || c.DataConnections != 4 || c.LTTngDialect != lttngagent.DialectRFC01 {
		t.Errorf("ApplyEnv gave %+v", c)
	}
	env["TADPOLE_PROTOCOL"] = "x"
	if err := c.ApplyEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }); !errors.Is(err, ErrBadOption) || !strings.Contains(err.Error(), "TADPOLE_PROTOCOL") {
		t.Errorf("ApplyEnv with a bad value = %v", err)
	}
}

func TestOptionHelpListsEveryKey(t *testing.T) {
	h := OptionHelp()
	for _, o := range options {
		if !strings.Contains(h, o.key) {
			t.Errorf("OptionHelp misses %q", o.key)
		}
	}
}
