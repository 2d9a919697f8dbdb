package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// Decode decodes the JSON object raw into dst, a non-nil pointer to a struct
// whose fields carry json tags, checking every value and coercing none: a key dst
// does not take, a value of the wrong JSON type (null included), an integer field
// given a fraction or an exponent, a number out of the field's range, or a duplicate
// key is refused. Nested objects are checked the same way. Each refusal is a
// *Refusal of one line naming the key by its path, e.g.
//
//	unknown argument "tsk"
//	argument "limit" must be a finite number
//	unknown argument "scope.task"
//	argument "tasks[1]" must be a non-empty string
//
// Keys match json tags exactly (case-sensitively). A field's `arg` tag (see ArgTag) says more:
// `arg:"required"` must be present; `arg:"nonempty"` refuses an empty string, list or object.
// json.RawMessage and interface{} fields take any value. A field whose pointer type
// implements json.Unmarshaler checks itself: its error's text completes the sentence
// `argument "key" …` (e.g. "must be a non-empty string or a list of them"), unless the
// error is a *Refusal, whose message is used as it is.
//
// An error that is not a *Refusal means dst is not a pointer to a struct or uses a
// type Decode does not support (a programming error). On error, dst may be
// partly filled.
func Decode(raw json.RawMessage, dst any) error { return decodeArgs(raw, dst, nil) }

// decodeArgs is Decode with the fields of the struct types in plan (fieldsPlan) listed once for
// every call of a tool rather than at each.
func decodeArgs(raw json.RawMessage, dst any, plan map[reflect.Type][]argField) error {
	pv := reflect.ValueOf(dst)
	if !pv.IsValid() || pv.Kind() != reflect.Pointer || pv.IsNil() || pv.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("tool.Decode: dst must be a non-nil pointer to a struct, not %T", dst)
	}
	trimmed := bytes.Trim(raw, " \t\r\n") // JSON's whitespace, no more
	if !json.Valid(trimmed) {
		return &Refusal{Msg: "arguments are not valid JSON"}
	}
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return &Refusal{Msg: "arguments must be an object"}
	}
	d := &argDecoder{dec: json.NewDecoder(bytes.NewReader(trimmed)), plan: plan}
	d.dec.UseNumber()
	if _, err := d.dec.Token(); err != nil { // the opening brace
		return &Refusal{Msg: "arguments are not valid JSON"}
	}
	return d.object(pv.Elem(), "")
}

// argDecoder walks one JSON document with a token stream, so that key order,
// duplicate keys and the exact JSON type of each value are seen.
type argDecoder struct {
	dec *json.Decoder
	// plan holds the fields of struct types listed ahead (nil: each is listed when met).
	plan map[reflect.Type][]argField
}

// fieldsPlan lists the fields of t and of every struct type its fields hold (through pointers,
// slices, arrays and maps), for decode: a tool lists its argument type's once, in New.
func fieldsPlan(t reflect.Type) (map[reflect.Type][]argField, error) {
	plan := map[reflect.Type][]argField{}
	var walk func(t reflect.Type) error
	walk = func(t reflect.Type) error {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return nil
		}
		if _, done := plan[t]; done {
			return nil
		}
		fields, err := fieldsOf(t)
		if err != nil {
			return err
		}
		plan[t] = fields
		for _, f := range fields {
			if err := walk(t.FieldByIndex(f.index).Type); err != nil {
				return err
			}
		}
		return nil
	}
	return plan, walk(t)
}

// programmingError marks a dst type Decode cannot decode into.
type programmingError struct{ msg string }

func (e *programmingError) Error() string { return "tool.Decode: " + e.msg }

func refuse(path, format string, args ...any) error {
	return &Refusal{Msg: fmt.Sprintf("argument %q ", path) + fmt.Sprintf(format, args...)}
}

func joinKey(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// argField is one settable struct field as Decode sees it.
type argField struct {
	name  string
	index []int
	argTag
}

// fieldsOf lists t's fields by JSON name, flattening embedded structs as
// encoding/json does (a shallower field wins over a deeper one of the same name).
func fieldsOf(t reflect.Type) ([]argField, error) {
	var out []argField
	depthOf := map[string]int{}
	var walk func(t reflect.Type, index []int, depth int) error
	walk = func(t reflect.Type, index []int, depth int) error {
		for i := range t.NumField() {
			sf := t.Field(i)
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			idx := append(append([]int(nil), index...), i)
			if sf.Anonymous && name == "" {
				ft := sf.Type
				if ft.Kind() == reflect.Pointer {
					return &programmingError{fmt.Sprintf("embedded pointer field %s in %s is not supported", sf.Name, t)}
				}
				if ft.Kind() == reflect.Struct {
					if err := walk(ft, idx, depth+1); err != nil {
						return err
					}
					continue
				}
			}
			if !sf.IsExported() {
				continue
			}
			if name == "" {
				name = sf.Name
			}
			for _, other := range []string{"args", "schema", "jsonschema"} {
				// One tag dialect: a field still spelled in another would lose its rules in silence.
				if _, ok := sf.Tag.Lookup(other); ok {
					return &programmingError{fmt.Sprintf("field %s of %s: the %q tag is not read: write its rules in %q", sf.Name, t, other, ArgTag)}
				}
			}
			opts, err := parseArgTag(sf.Tag.Get(ArgTag))
			if err != nil {
				return &programmingError{fmt.Sprintf("field %s of %s: %v", sf.Name, t, err)}
			}
			f := argField{name: name, index: idx, argTag: opts}
			if d, seen := depthOf[name]; seen {
				if d <= depth {
					continue
				}
				for j := range out {
					if out[j].name == name {
						out[j] = f
					}
				}
				depthOf[name] = depth
				continue
			}
			depthOf[name] = depth
			out = append(out, f)
		}
		return nil
	}
	if err := walk(t, nil, 0); err != nil {
		return nil, err
	}
	return out, nil
}

// ArgTag documents the one tag an argument field carries besides its json name: `arg`, a list of
// options separated by commas, of which doc, when present, is the last and runs to the end:
//
//	TaskID string `json:"taskId" arg:"required,nonempty,pattern=^[^#]+#.+$,doc=project#task."`
//
//	required      the key must be present
//	nonempty      an empty string, list or object is refused (minLength or minItems 1)
//	pattern=RE    the schema's pattern
//	enum=a|b|c    the schema's enum
//	default=JSON  the schema's default
//	doc=TEXT      the property's description, which the model reads
//
// Decode applies required and nonempty; the input schema (InputSchemaOf) says all of them.
const ArgTag = "arg"

// argTag is what an argument field's `arg` tag says.
type argTag struct {
	required, nonempty bool
	pattern            string
	enum               []string
	def                json.RawMessage
	doc                string
}

func parseArgTag(tag string) (argTag, error) {
	var a argTag
	opts, doc, hasDoc := strings.Cut(tag, "doc=")
	if hasDoc {
		if opts != "" && !strings.HasSuffix(opts, ",") {
			return a, fmt.Errorf("arg tag %q: doc= must begin an option", tag)
		}
		a.doc = doc
		opts = strings.TrimSuffix(opts, ",")
	}
	for opt := range strings.SplitSeq(opts, ",") {
		key, val, _ := strings.Cut(strings.TrimSpace(opt), "=")
		switch key {
		case "":
		case "required":
			a.required = true
		case "nonempty":
			a.nonempty = true
		case "pattern":
			a.pattern = val
		case "enum":
			a.enum = strings.Split(val, "|")
		case "default":
			if !json.Valid([]byte(val)) {
				return a, fmt.Errorf("arg tag %q: default %q is not JSON", tag, val)
			}
			a.def = json.RawMessage(val)
		default:
			return a, fmt.Errorf("unknown arg option %q", opt)
		}
	}
	return a, nil
}

// object decodes the members of an object whose opening brace was read into the
// struct or map v.
func (d *argDecoder) object(v reflect.Value, prefix string) error {
	if v.Kind() == reflect.Map {
		return d.mapMembers(v, prefix, false)
	}
	fields, ok := d.plan[v.Type()]
	if !ok {
		var err error
		if fields, err = fieldsOf(v.Type()); err != nil {
			return err
		}
	}
	seen := make([]bool, len(fields))
	var unknown []string
	for d.dec.More() {
		key, err := d.key()
		if err != nil {
			return err
		}
		path := joinKey(prefix, key)
		i := -1
		for j := range fields {
			if fields[j].name == key {
				i = j
				break
			}
		}
		if i < 0 {
			// Every stray key is named, not only the first: its value is skipped.
			unknown = append(unknown, path)
			var skip json.RawMessage
			if err := d.dec.Decode(&skip); err != nil {
				return &Refusal{Msg: "arguments are not valid JSON"}
			}
			continue
		}
		if seen[i] {
			return &Refusal{Msg: fmt.Sprintf("duplicate argument %q", path)}
		}
		seen[i] = true
		if err := d.value(v.FieldByIndex(fields[i].index), path, fields[i].nonempty); err != nil {
			return err
		}
	}
	if _, err := d.dec.Token(); err != nil { // the closing brace
		return &Refusal{Msg: "arguments are not valid JSON"}
	}
	if len(unknown) > 0 {
		return unknownArguments(unknown, prefix, fields)
	}
	for j, f := range fields {
		if f.required && !seen[j] {
			return &Refusal{Msg: fmt.Sprintf("missing argument %q", joinKey(prefix, f.name))}
		}
	}
	return nil
}

func (d *argDecoder) key() (string, error) {
	tok, err := d.dec.Token()
	if err != nil {
		return "", &Refusal{Msg: "arguments are not valid JSON"}
	}
	key, ok := tok.(string)
	if !ok {
		return "", &Refusal{Msg: "arguments are not valid JSON"}
	}
	return key, nil
}

// mapMembers decodes an object's members into the map v (string keys).
func (d *argDecoder) mapMembers(v reflect.Value, prefix string, nonempty bool) error {
	t := v.Type()
	if t.Key().Kind() != reflect.String {
		return &programmingError{fmt.Sprintf("map type %s needs string keys", t)}
	}
	m := reflect.MakeMap(t)
	seen := map[string]bool{}
	for d.dec.More() {
		key, err := d.key()
		if err != nil {
			return err
		}
		path := joinKey(prefix, key)
		if seen[key] {
			return &Refusal{Msg: fmt.Sprintf("duplicate argument %q", path)}
		}
		seen[key] = true
		elem := reflect.New(t.Elem()).Elem()
		if err := d.value(elem, path, false); err != nil {
			return err
		}
		m.SetMapIndex(reflect.ValueOf(key).Convert(t.Key()), elem)
	}
	if _, err := d.dec.Token(); err != nil {
		return &Refusal{Msg: "arguments are not valid JSON"}
	}
	if nonempty && m.Len() == 0 {
		return refuse(prefix, "must be a non-empty object")
	}
	v.Set(m)
	return nil
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// value decodes the next JSON value into v, refusing any value whose JSON type is
// not the one v's Go type stands for.
func (d *argDecoder) value(v reflect.Value, path string, nonempty bool) error {
	if v.CanAddr() && v.Addr().Type().Implements(unmarshalerType) {
		var raw json.RawMessage
		if err := d.dec.Decode(&raw); err != nil {
			return &Refusal{Msg: "arguments are not valid JSON"}
		}
		if err := v.Addr().Interface().(json.Unmarshaler).UnmarshalJSON(raw); err != nil {
			var r *Refusal
			if errors.As(err, &r) {
				return r
			}
			return refuse(path, "%s", OneLine(err.Error()))
		}
		return nil
	}
	if v.Kind() == reflect.Interface {
		if v.NumMethod() != 0 {
			return &programmingError{fmt.Sprintf("interface type %s is not supported", v.Type())}
		}
		var raw json.RawMessage
		if err := d.dec.Decode(&raw); err != nil {
			return &Refusal{Msg: "arguments are not valid JSON"}
		}
		return json.Unmarshal(raw, v.Addr().Interface())
	}
	if v.Kind() == reflect.Pointer {
		// Null is refused here as everywhere; anything else is decoded into a new
		// value of the element type, which may itself be an Unmarshaler.
		var raw json.RawMessage
		if err := d.dec.Decode(&raw); err != nil {
			return &Refusal{Msg: "arguments are not valid JSON"}
		}
		if string(raw) == "null" {
			return refuse(path, "%s", phrase(v.Type().Elem(), nonempty))
		}
		sub := &argDecoder{dec: json.NewDecoder(bytes.NewReader(raw))}
		sub.dec.UseNumber()
		p := reflect.New(v.Type().Elem())
		if err := sub.value(p.Elem(), path, nonempty); err != nil {
			return err
		}
		v.Set(p)
		return nil
	}
	tok, err := d.dec.Token()
	if err != nil {
		return &Refusal{Msg: "arguments are not valid JSON"}
	}
	return d.valueFrom(tok, v, path, nonempty)
}

// valueFrom decodes a value whose first token tok was already read.
func (d *argDecoder) valueFrom(tok json.Token, v reflect.Value, path string, nonempty bool) error {
	bad := func() error { return refuse(path, "%s", phrase(v.Type(), nonempty)) }
	switch v.Kind() {
	case reflect.String:
		s, ok := tok.(string)
		if !ok || (nonempty && s == "") {
			return bad()
		}
		v.SetString(s)
	case reflect.Bool:
		b, ok := tok.(bool)
		if !ok {
			return bad()
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, ok := tok.(json.Number)
		if !ok {
			return bad()
		}
		i, err := strconv.ParseInt(string(n), 10, 64)
		if err != nil || v.OverflowInt(i) {
			if _, ferr := strconv.ParseFloat(string(n), 64); ferr == nil && strings.ContainsAny(string(n), ".eE") {
				return bad()
			}
			return refuse(path, "must be an integer from %d to %d", minInt(v.Type()), maxInt(v.Type()))
		}
		v.SetInt(i)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		n, ok := tok.(json.Number)
		if !ok {
			return bad()
		}
		u, err := strconv.ParseUint(string(n), 10, 64)
		if err != nil || v.OverflowUint(u) {
			if strings.ContainsAny(string(n), ".eE-") {
				return bad()
			}
			return refuse(path, "must be an integer from 0 to %d", maxUint(v.Type()))
		}
		v.SetUint(u)
	case reflect.Float32, reflect.Float64:
		n, ok := tok.(json.Number)
		if !ok {
			return bad()
		}
		f, err := strconv.ParseFloat(string(n), v.Type().Bits())
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return bad()
		}
		v.SetFloat(f)
	case reflect.Slice:
		if tok != json.Delim('[') {
			return bad()
		}
		s := reflect.MakeSlice(v.Type(), 0, 0)
		for i := 0; d.dec.More(); i++ {
			elem := reflect.New(v.Type().Elem()).Elem()
			if err := d.value(elem, fmt.Sprintf("%s[%d]", path, i), false); err != nil {
				return err
			}
			s = reflect.Append(s, elem)
		}
		if _, err := d.dec.Token(); err != nil {
			return &Refusal{Msg: "arguments are not valid JSON"}
		}
		if nonempty && s.Len() == 0 {
			return bad()
		}
		v.Set(s)
	case reflect.Struct:
		if tok != json.Delim('{') {
			return bad()
		}
		return d.object(v, path)
	case reflect.Map:
		if tok != json.Delim('{') {
			return bad()
		}
		return d.mapMembers(v, path, nonempty)
	default:
		return &programmingError{fmt.Sprintf("field type %s is not supported", v.Type())}
	}
	return nil
}

// phrase completes "argument "key" …" for a value that is not of type t.
func phrase(t reflect.Type, nonempty bool) string {
	switch t.Kind() {
	case reflect.String:
		if nonempty {
			return "must be a non-empty string"
		}
		return "must be a string"
	case reflect.Bool:
		return "must be true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "must be an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return "must be a non-negative integer"
	case reflect.Float32, reflect.Float64:
		return "must be a finite number"
	case reflect.Slice:
		if nonempty {
			return "must be a non-empty list"
		}
		return "must be a list"
	case reflect.Struct, reflect.Map:
		if nonempty {
			return "must be a non-empty object"
		}
		return "must be an object"
	case reflect.Pointer:
		return phrase(t.Elem(), nonempty)
	default:
		return "has the wrong type"
	}
}

func minInt(t reflect.Type) int64 { return -1 << (t.Bits() - 1) }
func maxInt(t reflect.Type) int64 { return 1<<(t.Bits()-1) - 1 }
func maxUint(t reflect.Type) uint64 {
	return math.MaxUint64 >> (64 - t.Bits())
}

// OneLine keeps a message on one line, as every refusal must be.
func OneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.Join(strings.Fields(s), " ")
}

// unknownArguments refuses the stray keys of an object, each named, with the keys it accepts:
// unknown argument "tsk" (accepted: taskId, runId, cursor).
func unknownArguments(unknown []string, prefix string, fields []argField) error {
	quoted := make([]string, len(unknown))
	for i, k := range unknown {
		quoted[i] = strconv.Quote(k)
	}
	accepted := make([]string, 0, len(fields))
	for _, f := range fields {
		accepted = append(accepted, joinKey(prefix, f.name))
	}
	what := "unknown argument"
	if len(unknown) > 1 {
		what = "unknown arguments"
	}
	list := strings.Join(accepted, ", ")
	if len(accepted) == 0 {
		list = "none"
	}
	return &Refusal{Msg: fmt.Sprintf("%s %s (accepted: %s)", what, strings.Join(quoted, ", "), list)}
}
