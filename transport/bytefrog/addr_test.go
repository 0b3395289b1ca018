package bytefrog

import (
	"errors"
	"net"
	"strings"
	"testing"
)

func TestParseAddr(t *testing.T) {
	long := "/" + strings.Repeat("d", MaxUnixPath)
	for _, tc := range []struct {
		in       string
		net      string
		addr     string
		abstract bool
		str      string
	}{
		{"127.0.0.1:8765", NetTCP, "127.0.0.1:8765", false, "127.0.0.1:8765"},
		{"[::1]:0", NetTCP, "[::1]:0", false, "[::1]:0"},
		{"localhost:8765", NetTCP, "localhost:8765", false, "localhost:8765"},
		{"tcp:127.0.0.1:1", NetTCP, "127.0.0.1:1", false, "127.0.0.1:1"},
		{"unix:/run/tadpole/hq.sock", NetUnix, "/run/tadpole/hq.sock", false, "unix:/run/tadpole/hq.sock"},
		{"unix:rel/hq.sock", NetUnix, "rel/hq.sock", false, "unix:rel/hq.sock"},
		{"unix:@tadpole-hq", NetUnix, "@tadpole-hq", true, "unix:@tadpole-hq"},
		{"@tadpole-hq", NetUnix, "@tadpole-hq", true, "unix:@tadpole-hq"},
		{"unix:/a,b:c", NetUnix, "/a,b:c", false, "unix:/a,b:c"},
		{"unix:" + long[:MaxUnixPath], NetUnix, long[:MaxUnixPath], false, "unix:" + long[:MaxUnixPath]},
	} {
		a, err := ParseAddr(tc.in)
		if err != nil {
			t.Errorf("ParseAddr(%q): %v", tc.in, err)
			continue
		}
		if a.Net != tc.net || a.Addr != tc.addr || a.Abstract() != tc.abstract || a.String() != tc.str {
			t.Errorf("ParseAddr(%q) = %+v (abstract %v, %q); want %s %q (abstract %v, %q)",
				tc.in, a, a.Abstract(), a.String(), tc.net, tc.addr, tc.abstract, tc.str)
		}
		if b, err := ParseAddr(a.String()); err != nil || b != a {
			t.Errorf("ParseAddr(%q) = %+v, %v; want %+v", a.String(), b, err, a)
		}
	}
	for _, in := range []string{"", "8765", "127.0.0.1", "127.0.0.1:", "unix:", "unix:@", "@", "tcp:", "tcp:/x",
		"unix:" + long, "@" + long, "unix:/a\x00b", "/run/hq.sock",
		"tcp:unix:/x", "tcp:@a:1", "h:/x", "h:1 2"} {
		if a, err := ParseAddr(in); !errors.Is(err, ErrBadAddr) {
			t.Errorf("ParseAddr(%q) = %+v, %v; want ErrBadAddr", in, a, err)
		}
	}
}

func TestAddrOf(t *testing.T) {
	for _, tc := range []struct {
		a    net.Addr
		want string
	}{
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8765}, "127.0.0.1:8765"},
		{&net.UnixAddr{Name: "/tmp/hq.sock", Net: "unix"}, "unix:/tmp/hq.sock"},
		{&net.UnixAddr{Name: "@hq", Net: "unix"}, "unix:@hq"},
		{nil, ""},
	} {
		if got := AddrOf(tc.a); got != tc.want {
			t.Errorf("AddrOf(%v) = %q; want %q", tc.a, got, tc.want)
		}
	}
}

// FuzzParseAddr: any string parses or is refused with ErrBadAddr; a parsed
// address prints to a string that parses to the same address.
func FuzzParseAddr(f *testing.F) {
	for _, s := range []string{"127.0.0.1:8765", "[::1]:0", "tcp:h:1", "unix:/run/hq.sock", "@hq", "unix:@hq", "unix:", "@", "x", "tcp:unix:/x", "tcp:@a:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseAddr(s)
		if err != nil {
			if !errors.Is(err, ErrBadAddr) {
				t.Fatalf("ParseAddr(%q): %v is no ErrBadAddr", s, err)
			}
			return
		}
		if a.Net != NetTCP && a.Net != NetUnix || a.Net == NetUnix && len(a.Addr) > MaxUnixPath {
			t.Fatalf("ParseAddr(%q) = %+v", s, a)
		}
		if b, err := ParseAddr(a.String()); err != nil || b != a {
			t.Fatalf("ParseAddr(%q) = %+v; its String %q parses to %+v, %v", s, a, a.String(), b, err)
		}
	})
}
