package j4p

import (
	"bytes"
	"encoding/xml"
	"io"
	"net"
	"strconv"
	"strings"
)

// Policy is an access policy in the format of Jolokia's jolokia-access.xml
// (root <restrict>, or j4p 0.30's <j4p-restrict>):
//
//	<remote><host>127.0.0.1</host><host>10.0.0.0/16</host></remote>
//	<http><method>get</method><method>post</method></http>
//	<commands><command>read</command>…</commands>
//	<allow><mbean><name>java.lang:type=Memory</name>
//	    <attribute>*Usage</attribute><attribute mode="read">Verbose</attribute>
//	    <operation>gc</operation></mbean></allow>
//	<deny><mbean>…</mbean></deny>
//	<cors><allow-origin>http://*.example.com</allow-origin><strict-checking/></cors>
//
// Semantics, as Jolokia's restrictor: a <remote> section admits only the
// hosts listed (IP, name, CIDR or address/netmask); <http> only the
// methods listed; <commands> lists the operations allowed in general (all
// when absent; tadpole adds that write and exec are allowed in general
// only when the Config enables them). An operation allowed in general is
// refused on the attributes and operations a <deny> entry names; one not
// allowed in general is permitted only on those an <allow> entry names
// (<mbeans>, j4p 0.30's spelling, is a synonym). search, list and version
// have no MBean member: only <commands> decides them. Names in <name> are
// ObjectName patterns (every matching entry counts); attribute and
// operation names may hold '*' wildcards; mode="read" limits an attribute
// entry to reads.
// A Policy is immutable once parsed and safe for concurrent use.
type Policy struct {
	hosts    []hostRule // nil: no <remote>
	remote   bool
	methods  []string // lower case; nil: any
	commands []Type   // nil: any
	allow    []mbeanRule
	deny     []mbeanRule
	// Origins is the CORS allow-list (patterns with '*'); StrictOrigin
	// refuses requests whose Origin is not on it.
	Origins      []string
	StrictOrigin bool
}

type hostRule struct {
	ip   net.IP
	net  *net.IPNet
	name string
}

type mbeanRule struct {
	name  ObjectName
	attrs []attrRule
	ops   []string
}

type attrRule struct {
	name     string
	readOnly bool
}

type xmlRestrict struct {
	XMLName xml.Name
	Remote  *struct {
		Hosts []string `xml:"host"`
	} `xml:"remote"`
	HTTP *struct {
		Methods []string `xml:"method"`
	} `xml:"http"`
	Commands *struct {
		Commands []string `xml:"command"`
	} `xml:"commands"`
	Allow []xmlMBeans `xml:"allow"`
	Deny  []xmlMBeans `xml:"deny"`
	// j4p 0.30: <mbeans> is an allow list.
	MBeans []xmlMBeans `xml:"mbeans"`
	CORS   *struct {
		Origins []string  `xml:"allow-origin"`
		Strict  *struct{} `xml:"strict-checking"`
	} `xml:"cors"`
}

type xmlMBeans struct {
	MBeans []struct {
		Name  string `xml:"name"`
		Attrs []struct {
			Mode string `xml:"mode,attr"`
			Name string `xml:",chardata"`
		} `xml:"attribute"`
		Ops []string `xml:"operation"`
	} `xml:"mbean"`
}

// maxPolicyBytes bounds a policy file.
const maxPolicyBytes = 1 << 20

// ParsePolicy reads a policy document.
func ParsePolicy(r io.Reader) (*Policy, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxPolicyBytes+1))
	if err != nil {
		return nil, errorf(ErrBadPolicy, "%v", err)
	}
	if len(data) > maxPolicyBytes {
		return nil, errorf(ErrBadPolicy, "larger than %d bytes", maxPolicyBytes)
	}
	var x xmlRestrict
	dec := xml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&x); err != nil {
		return nil, errorf(ErrBadPolicy, "%v", err)
	}
	if x.XMLName.Local != "restrict" && x.XMLName.Local != "j4p-restrict" {
		return nil, errorf(ErrBadPolicy, "root element <%s>: want <restrict>", x.XMLName.Local)
	}
	p := &Policy{}
	if x.Remote != nil {
		p.remote = true
		for _, h := range x.Remote.Hosts {
			hr, err := parseHost(strings.TrimSpace(h))
			if err != nil {
				return nil, err
			}
			p.hosts = append(p.hosts, hr)
		}
	}
	if x.HTTP != nil {
		p.methods = []string{}
		for _, m := range x.HTTP.Methods {
			p.methods = append(p.methods, strings.ToLower(strings.TrimSpace(m)))
		}
	}
	if x.Commands != nil {
		p.commands = []Type{}
		for _, c := range x.Commands.Commands {
			c = strings.TrimSpace(c)
			t, err := ParseType(c)
			if err != nil {
				if strings.EqualFold(c, "notification") {
					continue // not served here: nothing to allow
				}
				return nil, errorf(ErrBadPolicy, "command %q", trunc(c))
			}
			p.commands = append(p.commands, t)
		}
	}
	add := func(dst *[]mbeanRule, secs []xmlMBeans) error {
		for _, s := range secs {
			for _, m := range s.MBeans {
				n, err := ParseObjectName(strings.TrimSpace(m.Name))
				if err != nil {
					return errorf(ErrBadPolicy, "mbean name: %v", err)
				}
				r := mbeanRule{name: n}
				for _, a := range m.Attrs {
					r.attrs = append(r.attrs, attrRule{strings.TrimSpace(a.Name), strings.EqualFold(a.Mode, "read")})
				}
				for _, o := range m.Ops {
					r.ops = append(r.ops, strings.TrimSpace(o))
				}
				*dst = append(*dst, r)
			}
		}
		return nil
	}
	if err := add(&p.allow, append(x.Allow, x.MBeans...)); err != nil {
		return nil, err
	}
	if err := add(&p.deny, x.Deny); err != nil {
		return nil, err
	}
	if x.CORS != nil {
		p.Origins = x.CORS.Origins
		for i := range p.Origins {
			p.Origins[i] = strings.TrimSpace(p.Origins[i])
		}
		p.StrictOrigin = x.CORS.Strict != nil
	}
	return p, nil
}

func parseHost(h string) (hostRule, error) {
	if addr, mask, ok := strings.Cut(h, "/"); ok {
		ip := net.ParseIP(addr)
		if ip == nil {
			return hostRule{}, errorf(ErrBadPolicy, "host %q: bad address", trunc(h))
		}
		if bits, err := strconv.Atoi(mask); err == nil {
			_, n, err := net.ParseCIDR(addr + "/" + strconv.Itoa(bits))
			if err != nil {
				return hostRule{}, errorf(ErrBadPolicy, "host %q: %v", trunc(h), err)
			}
			return hostRule{net: n}, nil
		}
		m := net.ParseIP(mask)
		if m == nil {
			return hostRule{}, errorf(ErrBadPolicy, "host %q: bad netmask", trunc(h))
		}
		if m4 := m.To4(); m4 != nil && ip.To4() != nil {
			mk := net.IPMask(m4)
			return hostRule{net: &net.IPNet{IP: ip.To4().Mask(mk), Mask: mk}}, nil
		}
		mk := net.IPMask(m.To16())
		return hostRule{net: &net.IPNet{IP: ip.Mask(mk), Mask: mk}}, nil
	}
	if ip := net.ParseIP(h); ip != nil {
		return hostRule{ip: ip}, nil
	}
	if h == "" {
		return hostRule{}, errorf(ErrBadPolicy, "empty host")
	}
	return hostRule{name: strings.ToLower(h)}, nil
}

// AllowHost reports whether a client at ip may use the endpoint. lookup
// resolves host names of the policy (nil: net.LookupIP); names resolve at
// each check, so keep them few.
func (p *Policy) AllowHost(ip net.IP, lookup func(string) ([]net.IP, error)) bool {
	if p == nil || !p.remote {
		return true
	}
	for _, h := range p.hosts {
		switch {
		case h.ip != nil && h.ip.Equal(ip), h.net != nil && h.net.Contains(ip):
			return true
		case h.name != "":
			if h.name == "localhost" && ip.IsLoopback() {
				return true
			}
			if lookup == nil {
				lookup = net.LookupIP
			}
			ips, _ := lookup(h.name)
			for _, a := range ips {
				if a.Equal(ip) {
					return true
				}
			}
		}
	}
	return false
}

// HasRemote reports whether the policy lists client hosts.
func (p *Policy) HasRemote() bool { return p != nil && p.remote }

// AllowMethod reports whether an HTTP method is allowed.
func (p *Policy) AllowMethod(m string) bool {
	if p == nil || p.methods == nil {
		return true
	}
	for _, x := range p.methods {
		if strings.EqualFold(x, m) {
			return true
		}
	}
	return false
}

// AllowType reports whether an operation is allowed.
func (p *Policy) AllowType(t Type) bool {
	if p == nil || p.commands == nil {
		return true
	}
	for _, x := range p.commands {
		if x == t {
			return true
		}
	}
	return false
}

// Allowed decides access of type t (read, write or exec) to member (an
// attribute or operation name) of the MBean name, as Jolokia's restrictor
// does: when the operation is allowed in general (typeAllowed: listed in
// <commands>, or no <commands> section, and for write and exec enabled by
// the Config), only a matching <deny> entry refuses it; otherwise only a
// matching <allow> entry permits it. A nil policy allows what is allowed in
// general.
func (p *Policy) Allowed(typeAllowed bool, t Type, name ObjectName, member string) bool {
	if typeAllowed {
		return p == nil || !matchRules(p.deny, t, name, member)
	}
	return p != nil && matchRules(p.allow, t, name, member)
}

func matchRules(rules []mbeanRule, t Type, name ObjectName, member string) bool {
	for _, r := range rules {
		if !r.name.Match(name) {
			continue
		}
		switch t {
		case TypeRead, TypeWrite:
			for _, a := range r.attrs {
				if (t == TypeRead || !a.readOnly) && globMatch(a.name, member) {
					return true
				}
			}
		case TypeExec:
			for _, o := range r.ops {
				if globMatch(o, member) {
					return true
				}
			}
		}
	}
	return false
}

// AllowOrigin reports whether a CORS origin is on the allow-list.
func (p *Policy) AllowOrigin(origin string) bool {
	if p == nil {
		return false
	}
	return originAllowed(p.Origins, origin)
}

func originAllowed(list []string, origin string) bool {
	for _, o := range list {
		if o == "*" || globMatch(o, origin) {
			return true
		}
	}
	return false
}
