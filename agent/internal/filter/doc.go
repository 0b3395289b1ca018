// Package filter matches log records against what lttng-sessiond enables in
// an agent: the event name pattern (a star glob), the log level rule and the
// filter expression the lttng CLI builds.
//
// # Name patterns
//
// Glob: only '*' is special and matches any run of bytes, the empty one
// included; '\' makes the next byte literal (`\*` is a star, `\\` a
// backslash); a trailing lone '\' matches nothing. The match is anchored at
// both ends. Consecutive stars act as one (lttng-ust's matcher quirk that
// "a**" does not match "a" is not reproduced).
//
// # Filter expressions
//
// Compile parses the LTTng filter language once into a small tree;
// Program.Eval evaluates it per record without allocating:
//
//	expr    := or
//	or      := and { "||" and }
//	and     := bitor { "&&" bitor }
//	bitor   := bitxor { "|" bitxor }      bitxor := bitand { "^" bitand }
//	bitand  := eq { "&" eq }
//	eq      := rel { ("==" | "!=") rel }
//	rel     := shift { ("<" | "<=" | ">" | ">=") shift }
//	shift   := unary { ("<<" | ">>") unary }
//	unary   := ("!" | "~" | "-" | "+") unary | postfix
//	postfix := primary { "." ident | "[" integer "]" }
//	primary := ident | "$ctx." name | "$app." provider ":" ctx
//	         | integer | float | string | "(" expr ")"
//
// Integers are decimal, octal (leading 0) or hexadecimal (0x), with optional
// C suffixes u/l; floats are C decimal floats. Strings are double-quoted with
// the C escapes \" \' \? \\ \a \b \f \n \r \t \v \ooo \xhh, plus \* for a
// literal star. As in LTTng, the arithmetic operators + - * / % are parsed
// but refused, and a string literal holding an unescaped '*' compared with
// == or != is a glob pattern (ordering operators refuse globs).
//
// Fields: logger_name and msg are strings, int_loglevel an integer, all read
// from Record; every other name (payload fields such as class_name,
// $ctx.<name>, $app.<provider>:<ctx>, a.b, a[0]) is asked from
// Record.Fields by its text.
//
// Semantics follow the lttng-ust bytecode interpreter: comparisons yield 1
// or 0, && and || short-circuit, a record passes when the result is a
// non-zero number. A field the record does not have, a type mismatch (a
// string compared with a number), a string used as a boolean or a shift
// count outside 0–63 is an evaluation error, and an error makes the whole
// filter false for that record (lttng-ust discards the event), even under !.
// Errors the compiler can see (literals of the wrong type, a glob with <) are
// compile errors, reported with their byte offset.
//
// # Log levels
//
// Level applies an ENABLE's level rule: ALL matches every level, RANGE
// matches level >= value ("this level or more severe": JUL SEVERE 1000 >
// INFO 800), SINGLE matches level == value.
package filter
