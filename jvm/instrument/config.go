package instrument

import (
	"errors"
	"strings"
)

// Probe method descriptors. The helper takes only ints, so probes leave the
// operand stack as they found it (a return value or the thrown exception
// stays under the probe's arguments).
const (
	EnterDesc  = "(I)V"  // enter(int id)
	ExitDesc   = "(II)V" // exit(int id, int line)
	ThrownDesc = "(II)V" // thrown(int id, int line), before athrow
	BubbleDesc = "(I)V"  // bubble(int id), in the catch-all handler

	// With Config.PassThrowable the thrown and bubble probes also get the
	// exception (a dup of the reference athrow or the handler holds), so
	// the helper can name its type.
	ThrownThrowableDesc = "(Ljava/lang/Throwable;II)V" // thrown(Throwable t, int id, int line)
	BubbleThrowableDesc = "(Ljava/lang/Throwable;I)V"  // bubble(Throwable t, int id)

	// With Config.PackedWords the exit and thrown probes push one long
	// constant, Word(kind, id, line), instead of the id and the line: an
	// ldc2_w of 3 bytes instead of two pushes of up to 3 each. The helper
	// overloads Exit and Thrown with these descriptors.
	ExitWordDesc            = "(J)V"                      // exit(long word)
	ThrownWordDesc          = "(J)V"                      // thrown(long word), before athrow
	ThrownThrowableWordDesc = "(Ljava/lang/Throwable;J)V" // thrown(Throwable t, long word)
)

// The kinds in the low byte of a packed word (Word).
const (
	KindExit   = 1
	KindThrown = 2
)

// Word is the packed argument of an exit or thrown probe with
// Config.PackedWords: line << 48 | id << 8 | kind, the line's low 16 bits
// and the id sign-extended, which is what Java's
// (long) (line & 0xFFFF) << 48 | (long) id << 8 | kind gives.
func Word(kind, id, line int32) int64 {
	return int64(line&0xFFFF)<<48 | int64(id)<<8 | int64(kind)
}

// NoLine is the line passed to exit and thrown when the method has no
// LineNumberTable.
const NoLine = 0xFFFF

// Config says which methods are instrumented and which helper the probes call.
type Config struct {
	// Helper is the internal name of the class whose public static methods
	// the probes call. Default "io/tadpole/Probe".
	Helper string
	// Enter, Exit, Thrown and Bubble name the helper's probe methods, with
	// descriptors EnterDesc, ExitDesc, ThrownDesc and BubbleDesc.
	// Defaults "enter", "exit", "thrown", "bubble".
	Enter, Exit, Thrown, Bubble string
	// Exclude lists internal class-name prefixes left alone ("java/lang/invoke/").
	// The helper and its nested classes are always left alone.
	Exclude []string
	// Bridges instruments ACC_BRIDGE methods too (default false: a bridge
	// only forwards, so the real method would be counted twice).
	Bridges bool
	// MethodID returns the id of a method, or ok false to leave it alone.
	// Nil instruments every method with ids 0, 1, 2… per Instrumenter.
	MethodID func(class, name, desc string) (id int32, ok bool)
	// Sites lists the methods whose calls get site probes (see SiteFunc),
	// and SiteID gives each call site its id; both nil: no site probes.
	Sites  []SiteTarget
	SiteID SiteFunc
	// Site and SiteEnd name the helper's site probes, with descriptors
	// SiteDesc and SiteEndDesc. Defaults "site", "siteEnd".
	Site, SiteEnd string
	// SitesOnly adds the site probes alone (see Call sites): no entry,
	// exit, thrown or bubble probes, no method ids asked; a method without
	// a site call is left unchanged and not listed in the ClassResult.
	// Requires Sites and SiteID.
	SitesOnly bool
	// MethodSig, when set, is used instead of MethodID: it gets the
	// method's Bytefrog signature (Signature) and access flags as well,
	// so that ids can be registered by signature.
	MethodSig func(class, name, desc string, access int, signature string) (id int32, ok bool)
	// PackedWords makes the exit and thrown probes pass their id and line
	// as one long constant (Word, ExitWordDesc, ThrownWordDesc or
	// ThrownThrowableWordDesc): every exit and thrown chunk is then 8 bytes
	// instead of up to 12, which keeps small traced methods within the
	// JIT's inlining limits. Each distinct word is a Long in the constant
	// pool; when the pool is full the probe takes the two ints instead.
	PackedWords bool
	// PassThrowable makes the thrown and bubble probes pass the exception
	// first (ThrownThrowableDesc, BubbleThrowableDesc); max_stack then grows
	// by 3 instead of 2.
	PassThrowable bool
	// Leaves gives a leaf method (one that calls nothing; see leaf.go)
	// one probe per return instead of an entry and an exit probe: its
	// entry stores the helper's static long field Now (NowDesc) in a new
	// local, each return calls Leaf (LeafDesc) with it and the exit word,
	// and its catch-all calls LeafBubble (LeafBubbleDesc, or
	// LeafBubbleThrowableDesc with PassThrowable). Requires PackedWords.
	// Defaults "now", "leaf", "bubbleLeaf".
	Leaves                bool
	Now, Leaf, LeafBubble string
	// LeafCalls, when set, names the static methods a leaf may still call
	// (invokestatic): methods that run no traced code and call none back,
	// such as Integer.compare with java.lang untraced. Nil: none.
	LeafCalls func(class, name, desc string) bool
}

// DefaultExclude is the exclusion list of DefaultConfig: classes the helper
// uses on its probe path, and classes that break when transformed
// (WeakPairMap: ClassCircularityError under -Xverify:all).
var DefaultExclude = []string{
	"java/lang/Object", "java/lang/Thread", "java/lang/ThreadLocal", "java/lang/String",
	"java/lang/Class", "jdk/internal/misc/Unsafe", "java/lang/invoke/",
	"java/lang/WeakPairMap", "java/lang/CharacterData",
}

// DefaultConfig returns the default configuration.
func DefaultConfig() Config {
	return Config{
		Helper: "io/tadpole/Probe",
		Enter:  "enter", Exit: "exit", Thrown: "thrown", Bubble: "bubble",
		Site: "site", SiteEnd: "siteEnd",
		Now: "now", Leaf: "leaf", LeafBubble: "bubbleLeaf",
		Exclude: append([]string(nil), DefaultExclude...),
	}
}

// ErrConfig is returned by Verify for an unusable configuration.
var ErrConfig = errors.New("instrument: invalid config")

// Verify checks the configuration.
func (c *Config) Verify() error {
	if c.Helper == "" || strings.ContainsAny(c.Helper, ".;[") {
		return errors.Join(ErrConfig, errors.New("instrument: helper must be an internal class name"))
	}
	names := []string{c.Enter, c.Exit, c.Thrown, c.Bubble}
	if len(c.Sites) > 0 {
		names = append(names, c.Site, c.SiteEnd)
	}
	if c.Leaves {
		if !c.PackedWords {
			return errors.Join(ErrConfig, errors.New("instrument: Leaves without PackedWords"))
		}
		names = append(names, c.Now, c.Leaf, c.LeafBubble)
	}
	for _, n := range names {
		if n == "" || strings.ContainsAny(n, ".;[/<>") {
			return errors.Join(ErrConfig, errors.New("instrument: bad probe method name "+n))
		}
	}
	if c.SitesOnly && (len(c.Sites) == 0 || c.SiteID == nil) {
		return errors.Join(ErrConfig, errors.New("instrument: SitesOnly without Sites and SiteID"))
	}
	return nil
}

// Excluded reports whether class is left alone: the helper, its nested
// classes, or a class matching an Exclude prefix.
func (c *Config) Excluded(class string) bool {
	if class == c.Helper || strings.HasPrefix(class, c.Helper+"$") {
		return true
	}
	for _, p := range c.Exclude {
		if strings.HasPrefix(class, p) {
			return true
		}
	}
	return false
}
