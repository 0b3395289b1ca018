package j4p

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Markers written in place of values cut by the limits.
const (
	markerObjectLimit = "[Object limit exceeded]"
	markerDepthPrefix = "[Depth limit "
	maxMarkerText     = 64
)

// walk holds the limits of one serialization.
type walk struct {
	maxDepth, maxColl, maxObjects int
	objects                       int
}

// jsonValue converts v into the JSON-ready tree (nil, bool, int64, uint64,
// float64, string, json.Number, []any, map[string]any), applying the
// limits: containers at depth maxDepth become a depth marker, past
// maxObjects containers become the object marker, lists and maps keep
// their first maxColl entries (maps by sorted key).
func (w *walk) jsonValue(v any, depth int) any {
	switch x := v.(type) {
	case nil, bool, string, int64, float64, json.Number:
		return x
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case int16:
		return int64(x)
	case int8:
		return int64(x)
	case uint8:
		return int64(x)
	case uint16:
		return int64(x)
	case uint32:
		return int64(x)
	case uint:
		return uint64(x)
	case uint64:
		return x
	case float32:
		return float64(x)
	case ObjectName:
		return map[string]any{"objectName": x.String()}
	case time.Time:
		return x.Format(time.RFC3339Nano)
	case time.Duration:
		return int64(x)
	case error:
		return x.Error()
	case []byte:
		return string(x)
	}
	switch x := v.(type) {
	case map[string]any:
		if x == nil {
			return nil
		}
		if !w.enter(depth) {
			return w.cut(x, depth)
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		if w.maxColl > 0 && len(keys) > w.maxColl {
			slices.Sort(keys)
			keys = keys[:w.maxColl]
		}
		out := make(map[string]any, len(keys))
		for _, k := range keys {
			out[k] = w.jsonValue(x[k], depth+1)
		}
		return out
	case []any:
		if x == nil {
			return nil
		}
		if !w.enter(depth) {
			return w.cut(x, depth)
		}
		n := len(x)
		if w.maxColl > 0 && n > w.maxColl {
			n = w.maxColl
		}
		out := make([]any, n)
		for i := range n {
			out[i] = w.jsonValue(x[i], depth+1)
		}
		return out
	}
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface {
		if rv.IsNil() {
			return nil
		}
		rv = rv.Elem()
	}
	switch rv.Kind() {
	case reflect.Bool:
		return rv.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return rv.Uint()
	case reflect.Float32, reflect.Float64:
		return rv.Float()
	case reflect.String:
		return rv.String()
	case reflect.Slice, reflect.Array, reflect.Map, reflect.Struct:
	default:
		if s, ok := v.(fmt.Stringer); ok {
			return s.String()
		}
		return fmt.Sprint(v)
	}
	if !w.enter(depth) {
		return w.cut(rv.Interface(), depth)
	}
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		if rv.Kind() == reflect.Slice && rv.IsNil() {
			return nil
		}
		n := rv.Len()
		if w.maxColl > 0 && n > w.maxColl {
			n = w.maxColl
		}
		out := make([]any, n)
		for i := range n {
			out[i] = w.jsonValue(rv.Index(i).Interface(), depth+1)
		}
		return out
	case reflect.Map:
		if rv.IsNil() {
			return nil
		}
		keys := make([]string, 0, rv.Len())
		byKey := make(map[string]reflect.Value, rv.Len())
		it := rv.MapRange()
		for it.Next() {
			k := mapKey(it.Key())
			keys = append(keys, k)
			byKey[k] = it.Value()
		}
		if w.maxColl > 0 && len(keys) > w.maxColl {
			slices.Sort(keys)
			keys = keys[:w.maxColl]
		}
		out := make(map[string]any, len(keys))
		for _, k := range keys {
			out[k] = w.jsonValue(byKey[k].Interface(), depth+1)
		}
		return out
	default: // struct
		t := rv.Type()
		out := make(map[string]any, t.NumField())
		for i := range t.NumField() {
			f := t.Field(i)
			name, ok := fieldName(f)
			if !ok {
				continue
			}
			out[name] = w.jsonValue(rv.Field(i).Interface(), depth+1)
		}
		return out
	}
}

func mapKey(k reflect.Value) string {
	if k.Kind() == reflect.String {
		return k.String()
	}
	return fmt.Sprint(k.Interface())
}

// fieldName is an exported field's name, or its json tag's.
func fieldName(f reflect.StructField) (string, bool) {
	if !f.IsExported() {
		return "", false
	}
	if tag, ok := f.Tag.Lookup("json"); ok {
		name, _, _ := strings.Cut(tag, ",")
		if name == "-" {
			return "", false
		}
		if name != "" {
			return name, true
		}
	}
	return f.Name, true
}

// enter counts one container at depth and reports whether it is within
// the limits; cut is the marker that replaces it when not.
func (w *walk) enter(depth int) bool {
	if w.maxDepth > 0 && depth >= w.maxDepth {
		return false
	}
	w.objects++
	return w.maxObjects <= 0 || w.objects <= w.maxObjects
}

func (w *walk) cut(v any, depth int) string {
	if w.maxDepth > 0 && depth >= w.maxDepth {
		s := fmt.Sprint(v)
		if len(s) > maxMarkerText {
			s = s[:maxMarkerText] + "…"
		}
		return markerDepthPrefix + s + "]"
	}
	return markerObjectLimit
}

// child steps into v by one inner-path segment.
func child(v any, seg string) (any, bool) {
	switch x := v.(type) {
	case map[string]any:
		c, ok := x[seg]
		return c, ok
	case []any:
		i, err := strconv.Atoi(seg)
		if err != nil || i < 0 || i >= len(x) {
			return nil, false
		}
		return x[i], true
	}
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface {
		if rv.IsNil() {
			return nil, false
		}
		rv = rv.Elem()
	}
	switch rv.Kind() {
	case reflect.Map:
		it := rv.MapRange()
		for it.Next() {
			if mapKey(it.Key()) == seg {
				return it.Value().Interface(), true
			}
		}
	case reflect.Slice, reflect.Array:
		i, err := strconv.Atoi(seg)
		if err != nil || i < 0 || i >= rv.Len() {
			return nil, false
		}
		return rv.Index(i).Interface(), true
	case reflect.Struct:
		t := rv.Type()
		for i := range t.NumField() {
			if name, ok := fieldName(t.Field(i)); ok && name == seg {
				return rv.Field(i).Interface(), true
			}
		}
	}
	return nil, false
}

// children lists v's entries for a "*" segment: keys (nil for a list) and
// values.
func children(v any) (keys []string, vals []any, ok bool) {
	w := walk{}
	switch x := w.jsonValue(v, 0).(type) {
	case map[string]any:
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			c, _ := child(v, k)
			vals = append(vals, c)
		}
		return keys, vals, true
	case []any:
		for i := range x {
			c, _ := child(v, strconv.Itoa(i))
			vals = append(vals, c)
		}
		return nil, vals, true
	}
	return nil, nil, false
}

// navigate follows an inner path; "*" applies the rest of the path to every
// entry, keeping those where it leads somewhere.
func navigate(v any, path []string) (any, error) {
	for i, seg := range path {
		if seg == "*" {
			keys, vals, ok := children(v)
			if !ok {
				return nil, errorf(ErrPathNotFound, "%q: no entries for '*'", joinInnerPath(path[:i+1]))
			}
			if keys == nil {
				out := []any{}
				for _, c := range vals {
					if r, err := navigate(c, path[i+1:]); err == nil {
						out = append(out, r)
					}
				}
				return out, nil
			}
			out := map[string]any{}
			for j, c := range vals {
				if r, err := navigate(c, path[i+1:]); err == nil {
					out[keys[j]] = r
				}
			}
			return out, nil
		}
		c, ok := child(v, seg)
		if !ok {
			return nil, errorf(ErrPathNotFound, "no entry %q at path %q", seg, joinInnerPath(path[:i+1]))
		}
		v = c
	}
	return v, nil
}

// setIn returns a copy of root (maps and lists along the path copied) with
// the value at path replaced, and the value it replaced.
func setIn(root any, path []string, v any) (any, any, error) {
	if len(path) == 0 {
		return v, root, nil
	}
	seg := path[0]
	switch x := root.(type) {
	case map[string]any:
		c, ok := x[seg]
		if !ok && len(path) > 1 {
			return nil, nil, errorf(ErrPathNotFound, "no entry %q", seg)
		}
		nc, old, err := setIn(c, path[1:], v)
		if err != nil {
			return nil, nil, err
		}
		cp := make(map[string]any, len(x)+1)
		for k, e := range x {
			cp[k] = e
		}
		cp[seg] = nc
		return cp, old, nil
	case []any:
		i, err := strconv.Atoi(seg)
		if err != nil || i < 0 || i >= len(x) {
			return nil, nil, errorf(ErrPathNotFound, "no index %q", seg)
		}
		nc, old, err := setIn(x[i], path[1:], v)
		if err != nil {
			return nil, nil, err
		}
		cp := slices.Clone(x)
		cp[i] = nc
		return cp, old, nil
	}
	return nil, nil, errorf(ErrIllegalArgument, "cannot set %q inside a %T", seg, root)
}

// maxValueDepth bounds the nesting of a JSON value given as a string.
const maxValueDepth = 32

// plainNumbers replaces json.Number, anywhere in v, by int64 or float64.
func plainNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plainNumbers(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = plainNumbers(e)
		}
		return out
	}
	return v
}

// javaKind groups the Java type names values are converted to.
type javaKind uint8

const (
	kindOther javaKind = iota
	kindString
	kindBool
	kindInt
	kindFloat
	kindArray
)

var javaTypes = map[string]struct {
	k    javaKind
	bits int
}{
	"java.lang.String": {kindString, 0}, "String": {kindString, 0}, "string": {kindString, 0},
	"boolean": {kindBool, 0}, "java.lang.Boolean": {kindBool, 0}, "bool": {kindBool, 0},
	"byte": {kindInt, 8}, "java.lang.Byte": {kindInt, 8},
	"short": {kindInt, 16}, "java.lang.Short": {kindInt, 16},
	"int": {kindInt, 32}, "java.lang.Integer": {kindInt, 32}, "int32": {kindInt, 32},
	"long": {kindInt, 64}, "java.lang.Long": {kindInt, 64}, "int64": {kindInt, 64},
	"float": {kindFloat, 32}, "java.lang.Float": {kindFloat, 32},
	"double": {kindFloat, 64}, "java.lang.Double": {kindFloat, 64}, "float64": {kindFloat, 64},
}

// elemType is the element type of a Java array type name, or "".
func elemType(t string) string {
	switch {
	case strings.HasSuffix(t, "[]"):
		return strings.TrimSuffix(t, "[]")
	case strings.HasPrefix(t, "[L") && strings.HasSuffix(t, ";"):
		return t[2 : len(t)-1]
	case strings.HasPrefix(t, "["):
		switch t[1:] {
		case "I":
			return "int"
		case "J":
			return "long"
		case "Z":
			return "boolean"
		case "D":
			return "double"
		case "F":
			return "float"
		case "S":
			return "short"
		case "B":
			return "byte"
		}
	}
	return ""
}

// convert turns a request value (a string from GET, a JSON value from POST)
// into the declared Java type.
func convert(v any, typ string) (any, error) {
	if et := elemType(typ); et != "" {
		var items []any
		switch x := v.(type) {
		case nil:
			return nil, nil
		case string:
			for _, s := range splitList(x) {
				items = append(items, s)
			}
		case []any:
			items = x
		default:
			return nil, errorf(ErrIllegalArgument, "want a list for %s, got %T", typ, v)
		}
		out := make([]any, len(items))
		for i, it := range items {
			c, err := convert(it, et)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	}
	jt, known := javaTypes[typ]
	if v == nil {
		if known && jt.k != kindString && !strings.Contains(typ, ".") {
			return nil, errorf(ErrIllegalArgument, "null for primitive %s", typ)
		}
		return nil, nil
	}
	if !known {
		// A complex type: a string holding a JSON object or array (GET) is
		// parsed, as Jolokia does; numbers become int64 or float64.
		if s, ok := v.(string); ok && len(s) > 0 && (s[0] == '{' || s[0] == '[') {
			if err := CheckJSONDepth([]byte(s), maxValueDepth); err != nil {
				return nil, errorf(ErrIllegalArgument, "value for %s: %v", typ, err)
			}
			d := json.NewDecoder(strings.NewReader(s))
			d.UseNumber()
			var parsed any
			if err := d.Decode(&parsed); err != nil {
				return nil, errorf(ErrIllegalArgument, "value for %s is not JSON: %v", typ, err)
			}
			v = parsed
		}
		return plainNumbers(v), nil
	}
	text := ""
	switch x := v.(type) {
	case string:
		text = x
	case json.Number:
		text = x.String()
	case bool:
		text = strconv.FormatBool(x)
	case float64:
		text = strconv.FormatFloat(x, 'g', -1, 64)
	case int64:
		text = strconv.FormatInt(x, 10)
	default:
		if jt.k == kindString {
			return nil, errorf(ErrIllegalArgument, "want a string for %s, got %T", typ, v)
		}
		return nil, errorf(ErrIllegalArgument, "want a scalar for %s, got %T", typ, v)
	}
	switch jt.k {
	case kindString:
		return text, nil
	case kindBool:
		b, err := strconv.ParseBool(strings.ToLower(text))
		if err != nil {
			return nil, errorf(ErrIllegalArgument, "%q is not a boolean", trunc(text))
		}
		return b, nil
	case kindInt:
		n, err := strconv.ParseInt(strings.TrimSpace(text), 10, jt.bits)
		if err != nil {
			return nil, errorf(ErrIllegalArgument, "%q is not a %s", trunc(text), typ)
		}
		return n, nil
	case kindFloat:
		f, err := strconv.ParseFloat(strings.TrimSpace(text), jt.bits)
		if err != nil || math.IsInf(f, 0) && !strings.Contains(strings.ToLower(text), "inf") {
			return nil, errorf(ErrIllegalArgument, "%q is not a %s", trunc(text), typ)
		}
		return f, nil
	}
	return v, nil
}
