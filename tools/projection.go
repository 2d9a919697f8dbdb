package tools

import (
	"fmt"
	"reflect"
)

// fieldProjection copies, from a Src to a Dst, the fields of Dst that Src has: a Dst is a view of
// some of a Src's fields, whose names, types and json tags are Src's.
type fieldProjection[Dst, Src any] struct {
	// pairs are the indexes of each projected field in Dst and in Src.
	pairs [][2]int
}

// projection returns the projection of Src onto Dst. Every field of Dst but those named in own
// must be Src's field of the same name, type and json tag; projection panics otherwise (a
// programming error, seen when the package starts).
func projection[Dst, Src any](own ...string) fieldProjection[Dst, Src] {
	dst, src := reflect.TypeFor[Dst](), reflect.TypeFor[Src]()
	var p fieldProjection[Dst, Src]
next:
	for i := range dst.NumField() {
		df := dst.Field(i)
		for _, name := range own {
			if df.Name == name {
				continue next
			}
		}
		sf, ok := src.FieldByName(df.Name)
		if !ok || len(sf.Index) != 1 || sf.Type != df.Type || sf.Tag.Get("json") != df.Tag.Get("json") {
			panic(fmt.Sprintf("tools: %v.%s is not %v's field of that name, type and json tag", dst, df.Name, src))
		}
		p.pairs = append(p.pairs, [2]int{i, sf.Index[0]})
	}
	return p
}

// copy sets the projected fields of dst from src.
func (p fieldProjection[Dst, Src]) copy(dst *Dst, src *Src) {
	d, s := reflect.ValueOf(dst).Elem(), reflect.ValueOf(src).Elem()
	for _, pair := range p.pairs {
		d.Field(pair[0]).Set(s.Field(pair[1]))
	}
}
