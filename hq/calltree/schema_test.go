package calltree_test

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// A JSON Schema (draft-07) check of the keywords speedscope's schema uses:
// $ref to definitions, type, properties, required, items, anyOf, enum and
// const. A keyword it does not know fails the check, so that a new schema
// cannot pass unchecked.

type jsonSchema struct {
	root map[string]any
}

var knownKeywords = []string{"$schema", "$ref", "definitions", "title", "type", "properties", "required", "items", "anyOf", "enum", "const"}

func loadSchema(t testing.TB, path string) *jsonSchema {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var root map[string]any
	if err := json.Unmarshal(b, &root); err != nil {
		t.Fatal(err)
	}
	return &jsonSchema{root: root}
}

// validate checks the JSON document doc.
func (s *jsonSchema) validate(doc []byte) error {
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		return err
	}
	return s.check(s.root, v, "$")
}

func (s *jsonSchema) check(sch map[string]any, v any, at string) error {
	for k := range sch {
		if !slices.Contains(knownKeywords, k) {
			return fmt.Errorf("schema keyword %q not supported by this check", k)
		}
	}
	if ref, ok := sch["$ref"].(string); ok {
		name, ok := strings.CutPrefix(ref, "#/definitions/")
		def, ok2 := s.root["definitions"].(map[string]any)[name].(map[string]any)
		if !ok || !ok2 {
			return fmt.Errorf("schema: bad $ref %q", ref)
		}
		return s.check(def, v, at) // draft-07: $ref's siblings are ignored
	}
	if alts, ok := sch["anyOf"].([]any); ok {
		var errs []string
		for _, alt := range alts {
			err := s.check(alt.(map[string]any), v, at)
			if err == nil {
				errs = nil
				break
			}
			errs = append(errs, err.Error())
		}
		if errs != nil {
			return fmt.Errorf("%s: matches no alternative: %s", at, strings.Join(errs, "; "))
		}
	}
	if ty, ok := sch["type"].(string); ok {
		okType := false
		switch ty {
		case "object":
			_, okType = v.(map[string]any)
		case "array":
			_, okType = v.([]any)
		case "string":
			_, okType = v.(string)
		case "number":
			_, okType = v.(float64)
		default:
			return fmt.Errorf("schema type %q not supported by this check", ty)
		}
		if !okType {
			return fmt.Errorf("%s: %T is not a JSON %s", at, v, ty)
		}
	}
	if c, ok := sch["const"]; ok && !reflect.DeepEqual(c, v) {
		return fmt.Errorf("%s: %v; want %v", at, v, c)
	}
	if e, ok := sch["enum"].([]any); ok && !slices.ContainsFunc(e, func(x any) bool { return reflect.DeepEqual(x, v) }) {
		return fmt.Errorf("%s: %v is not one of %v", at, v, e)
	}
	obj, isObj := v.(map[string]any)
	if req, ok := sch["required"].([]any); ok && isObj {
		for _, k := range req {
			if _, ok := obj[k.(string)]; !ok {
				return fmt.Errorf("%s: required property %q missing", at, k)
			}
		}
	}
	if props, ok := sch["properties"].(map[string]any); ok && isObj {
		for k, p := range props {
			if x, ok := obj[k]; ok {
				if err := s.check(p.(map[string]any), x, at+"."+k); err != nil {
					return err
				}
			}
		}
	}
	if items, ok := sch["items"].(map[string]any); ok {
		if arr, ok := v.([]any); ok {
			for i, x := range arr {
				if err := s.check(items, x, fmt.Sprintf("%s[%d]", at, i)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

const speedscopeSchemaPath = "testdata/speedscope-file-format-schema.json"

// TestSchemaCheckFails makes sure the check rejects what the schema
// rejects.
func TestSchemaCheckFails(t *testing.T) {
	s := loadSchema(t, speedscopeSchemaPath)
	good := `{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{"frames":[{"name":"a"}]},` +
		`"profiles":[{"type":"evented","name":"t","unit":"milliseconds","startValue":0,"endValue":1,` +
		`"events":[{"type":"O","frame":0,"at":0},{"type":"C","frame":0,"at":1}]}]}`
	if err := s.validate([]byte(good)); err != nil {
		t.Fatalf("a valid file fails: %v", err)
	}
	for _, bad := range [][2]string{
		{`"$schema":"https://www.speedscope.app/file-format-schema.json",`, ``},
		{`"unit":"milliseconds"`, `"unit":"ms"`},
		{`"type":"O"`, `"type":"X"`},
		{`"at":1`, `"at":"1"`},
		{`{"name":"a"}`, `{"nom":"a"}`},
		{`"startValue":0,`, ``},
		{`"frames":[`, `"frame":[`},
	} {
		doc := strings.Replace(good, bad[0], bad[1], 1)
		if err := s.validate([]byte(doc)); err == nil {
			t.Errorf("%s → %s: passes the check", bad[0], bad[1])
		}
	}
}
