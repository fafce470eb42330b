package api

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
)

// TestReadAnswerJSONIsMarshal: the reflection-free encoding of the GET /generations/{id} answer
// is byte for byte json.Marshal's, over random answers that reach every field (nil and set
// pointers, strings that need escaping, invalid UTF-8, raw results with spaces and HTML). A field
// added to the answer's types and not to appendReadAnswer fails here.
func TestReadAnswerJSONIsMarshal(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		var a readAnswer
		fillRandom(t, rnd, reflect.ValueOf(&a).Elem())
		want, werr := json.Marshal(a)
		got, gerr := appendReadAnswer(nil, &a)
		if (werr != nil) != (gerr != nil) {
			t.Fatalf("case %d: json.Marshal error %v, appendReadAnswer error %v", i, werr, gerr)
		}
		if werr == nil && !bytes.Equal(got, want) {
			t.Fatalf("case %d:\ngot  %s\nwant %s", i, got, want)
		}
	}
}

var (
	randomStrings = []string{"", "completed", "gen_4c6e9a8c0983e26c4454c5c9d7306be9", "2026-01-05T09:00:00Z",
		"http://127.0.0.1:8080/files/ast_1/take%20one.wav?expires=1767610800&sig=ab12", `say "hi"`, `back\slash`,
		"<b>&</b>", "a<b", "a>b", "a&b", "é", "line\u2028sep\u2029", "\x00\x1f\x7f", "del\x7f", "bad \xff utf-8", "tab\there\nnewline\r", "\u00a0emoji 🎬"}
	randomRaw = []string{"", `{"hooks":["a","b"]}`, ` { "a" : [ 1 , 2.5e3 , true , null ] } `, `"<&>"`, `null`, `12`,
		`{"x":"\u2028"}`, `{"bad":`, `[]`}
)

// fillRandom sets every field reachable from v to a random value.
func fillRandom(t *testing.T, rnd *rand.Rand, v reflect.Value) {
	t.Helper()
	if v.Type() == reflect.TypeFor[json.RawMessage]() {
		if s := randomRaw[rnd.IntN(len(randomRaw))]; s != "" || rnd.IntN(2) == 0 {
			v.SetBytes([]byte(s))
		}
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(randomStrings[rnd.IntN(len(randomStrings))])
	case reflect.Bool:
		v.SetBool(rnd.IntN(2) == 0)
	case reflect.Int, reflect.Int64:
		v.SetInt([]int64{0, 1, -1, 42, 1 << 40, -1 << 62, rnd.Int64()}[rnd.IntN(7)])
	case reflect.Pointer:
		if rnd.IntN(3) > 0 {
			p := reflect.New(v.Type().Elem())
			fillRandom(t, rnd, p.Elem())
			v.Set(p)
		}
	case reflect.Slice:
		if rnd.IntN(4) > 0 {
			s := reflect.MakeSlice(v.Type(), rnd.IntN(4), 4)
			for i := range s.Len() {
				fillRandom(t, rnd, s.Index(i))
			}
			v.Set(s)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fillRandom(t, rnd, v.Field(i))
			}
		}
	default:
		t.Fatalf("fillRandom: no random %s (%s): teach it, and appendReadAnswer, the new field", v.Type(), v.Kind())
	}
}
