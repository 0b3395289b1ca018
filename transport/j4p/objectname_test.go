package j4p

import (
	"errors"
	"testing"
)

func TestParseObjectName(t *testing.T) {
	tests := []struct {
		in, canon, str string
		pattern        bool
	}{
		{"java.lang:type=Memory", "java.lang:type=Memory", "java.lang:type=Memory", false},
		{"java.lang:type=MemoryPool,name=Code Cache", "java.lang:name=Code Cache,type=MemoryPool", "java.lang:type=MemoryPool,name=Code Cache", false},
		{`d:k="a,b=c:d",j=1`, `d:j=1,k="a,b=c:d"`, `d:k="a,b=c:d",j=1`, false},
		{"*:type=Memory,*", "*:type=Memory,*", "*:type=Memory,*", true},
		{"*:*", "*:*", "*:*", true},
		{"java.lang:type=Mem*", "java.lang:type=Mem*", "java.lang:type=Mem*", true},
		{`d:k="a*"`, `d:k="a*"`, `d:k="a*"`, false},
		{"jboss.jmx:alias=jmx/rmi/RMIAdaptor", "jboss.jmx:alias=jmx/rmi/RMIAdaptor", "jboss.jmx:alias=jmx/rmi/RMIAdaptor", false},
	}
	for _, tt := range tests {
		n, err := ParseObjectName(tt.in)
		if err != nil {
			t.Errorf("ParseObjectName(%q): %v", tt.in, err)
			continue
		}
		if got := n.Canonical(); got != tt.canon {
			t.Errorf("%q canonical = %q; want %q", tt.in, got, tt.canon)
		}
		if got := n.String(); got != tt.str {
			t.Errorf("%q string = %q; want %q", tt.in, got, tt.str)
		}
		if got := n.IsPattern(); got != tt.pattern {
			t.Errorf("%q pattern = %v; want %v", tt.in, got, tt.pattern)
		}
	}
	for _, bad := range []string{"", "nocolon", "d:", "d:k", "d:=v", "d:k=", "d:k=v,k=w", `d:k="open`, `d:k="\x"`, "d:k=v,", "d:*,*", "d:k=a=b", "d:k=v,,j=w"} {
		if _, err := ParseObjectName(bad); !errors.Is(err, ErrBadObjectName) {
			t.Errorf("ParseObjectName(%q) err = %v; want ErrBadObjectName", bad, err)
		}
	}
}

func TestObjectNameMatch(t *testing.T) {
	tests := []struct {
		pat, name string
		want      bool
	}{
		{"*:type=Memory,*", "java.lang:type=Memory", true},
		{"*:type=Memory", "java.lang:type=Memory", true},
		{"*:type=Memory", "java.lang:type=Memory,x=y", false},
		{"*:type=Memory,*", "java.lang:x=y,type=Memory", true},
		{"java.*:*", "java.lang:type=Memory", true},
		{"java.?ang:*", "java.lang:type=Memory", true},
		{"jav:*", "java.lang:type=Memory", false},
		{"java.lang:type=Mem*", "java.lang:type=Memory", true},
		{"java.lang:type=Mem*", "java.lang:type=Threading", false},
		{"java.lang:name=Code Cache,type=MemoryPool", "java.lang:type=MemoryPool,name=Code Cache", true},
		{"a:k=*,*", "a:j=1", false},
	}
	for _, tt := range tests {
		p, n := MustObjectName(tt.pat), MustObjectName(tt.name)
		if got := p.Match(n); got != tt.want {
			t.Errorf("%q matches %q = %v; want %v", tt.pat, tt.name, got, tt.want)
		}
	}
}

func TestGlobMatch(t *testing.T) {
	tests := []struct {
		p, s string
		want bool
	}{
		{"*", "", true}, {"a*b", "ab", true}, {"a*b", "axxb", true}, {"a*b", "axxc", false},
		{"?", "", false}, {"*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false}, {"x?z", "xyz", true},
	}
	for _, tt := range tests {
		if got := globMatch(tt.p, tt.s); got != tt.want {
			t.Errorf("globMatch(%q, %q) = %v; want %v", tt.p, tt.s, got, tt.want)
		}
	}
}

func TestQuote(t *testing.T) {
	for _, s := range []string{"plain", "", "a,b", `q"uote`, "st*r?", `back\slash`, "new\nline", "k=v:x"} {
		q := Quote(s)
		n, err := ParseObjectName("io.tadpole:type=Logger,name=" + q)
		if err != nil {
			t.Errorf("Quote(%q) = %q: %v", s, q, err)
			continue
		}
		if n.IsPattern() {
			t.Errorf("Quote(%q) = %q is a pattern", s, q)
		}
		if got := Unquote(n.Key("name")); got != s {
			t.Errorf("Unquote(Quote(%q)) = %q", s, got)
		}
	}
}
