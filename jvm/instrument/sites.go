package instrument

import (
	"encoding/binary"
	"slices"
)

// Site probe descriptors: site(int id) before a call, siteEnd() after it.
const (
	SiteDesc    = "(I)V"
	SiteEndDesc = "()V"
)

// SiteTarget names the methods whose call sites get site probes: every
// invokevirtual, invokeinterface or invokestatic of a method of Owner
// (internal name) whose name is in Names (all when Names is empty).
// Constructors are never targets.
type SiteTarget struct {
	Owner string
	Names []string
}

// SiteFunc returns the id of a call site: the calling method (class
// internal name, name, descriptor), the line of the call (NoLine without a
// LineNumberTable) and the called method; ok false leaves the call alone.
type SiteFunc func(class, method, desc string, line int32, owner, name string) (id int32, ok bool)

// Call sites
//
// With Config.Sites and Config.SiteID set, each call of a target method
// gets a site probe before it and a siteEnd probe after it:
//
//	[nop*] push id; invokestatic site(I)V   owned by the call: a branch to the call runs it
//	[nop*] invokestatic siteEnd()V          before the next instruction, not owned: only the
//	                                        call's fall-through runs it
//
// so the helper knows, while the call runs, which method and line made it,
// without walking the stack: the source of a log record is its call site.
// A call that throws skips siteEnd; the helper's bubble probe, or the next
// site, replaces the stale id.
//
// With Config.SitesOnly a class gets the site probes alone: the methods
// without a site call are left as they are, and each method with one gets,
// instead of the method probes, a catch-all handler that clears the site
// when an exception leaves the method (the bubble probe's part in the full
// rewrite):
//
//	[nop*] invokestatic siteEnd()V; athrow   (handler of [start, itself), stack [Throwable])
//
// So the cost of a class no one traces is the site probes of its log
// calls, and the same class rewritten later with the method probes keeps
// its sites (the ids come from SiteID).

// siteRefs are the pool indexes of the site probes of the current class.
type siteRefs struct{ site, end uint16 }

// memberOwner is implemented by pools that name the class of a member
// reference; call sites need it.
type memberOwner interface {
	MemberOwner(i uint16) (string, error)
}

// MemberOwner returns the class of member reference i.
func (c classPool) MemberOwner(i uint16) (string, error) {
	if _, _, err := c.Member(i); err != nil {
		return "", err
	}
	owner, _, _ := c.p.MemberRef(i)
	return owner, nil
}

// isTarget reports whether a call of owner.name is a site target.
func (c *Config) isTarget(owner, name string) bool {
	if name == "<init>" || name == "<clinit>" {
		return false
	}
	for _, t := range c.Sites {
		if t.Owner == owner && (len(t.Names) == 0 || slices.Contains(t.Names, name)) {
			return true
		}
	}
	return false
}

// siteChunks appends the site probes of the call at insns[i], if it is a
// target, to chunks. The chunks of one call are out of offset order (the
// call's, then the next instruction's); sortChunks restores it.
func (x *Instrumenter) siteChunks(chunks []Chunk, m *Method, insns []Insn, i int, code []byte, pool Pool,
	lines lineTable) ([]Chunk, error) {
	in := insns[i]
	switch in.Op {
	case OpInvokevirtual, OpInvokeinterf, OpInvokestatic:
	default:
		return chunks, nil
	}
	po, ok := pool.(memberOwner)
	if !ok || i+1 >= len(insns) {
		return chunks, nil
	}
	ref := binary.BigEndian.Uint16(code[in.Off+1:])
	owner, err := po.MemberOwner(ref)
	if err != nil {
		return chunks, nil // the pool entry is checked where the call is resolved
	}
	name, _, err := pool.Member(ref)
	if err != nil || !x.cfg.isTarget(owner, name) {
		return chunks, nil
	}
	line := lines.line(in.Off)
	id, ok := x.cfg.SiteID(m.Class, m.Name, m.Desc, line, owner, name)
	if !ok {
		return chunks, nil
	}
	if x.sites.site == 0 {
		if x.sites.site, err = pool.Methodref(x.cfg.Helper, x.cfg.Site, SiteDesc); err != nil {
			return chunks, err
		}
		if x.sites.end, err = pool.Methodref(x.cfg.Helper, x.cfg.SiteEnd, SiteEndDesc); err != nil {
			return chunks, err
		}
	}
	var idBuf [3]byte
	push, err := pushInt(idBuf[:0], id, pool)
	if err != nil {
		return chunks, err
	}
	var b []byte
	if x.arena, b, err = probe(x.arena, x.sites.site, pool, nil, push, false, 0); err != nil {
		return chunks, err
	}
	chunks = append(chunks, Chunk{At: in.Off, Owned: true, Bytes: b})
	if x.arena, b, err = probe(x.arena, x.sites.end, pool, nil, nil, false, 0); err != nil {
		return chunks, err
	}
	return append(chunks, Chunk{At: insns[i+1].Off, Bytes: b}), nil
}

// sortChunks orders chunks by offset, the chunks that are not owned before
// the owned ones at one offset, keeping their order otherwise.
func sortChunks(chunks []Chunk) {
	slices.SortStableFunc(chunks, func(a, b Chunk) int {
		if a.At != b.At {
			return a.At - b.At
		}
		switch {
		case a.Owned == b.Owned:
			return 0
		case !a.Owned:
			return -1
		}
		return 1
	})
}
