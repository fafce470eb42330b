package jsoncount

import "testing"

func TestValues(t *testing.T) {
	for in, want := range map[string]int{
		`0`: 1, `[]`: 2, `[1,2,3]`: 4, `{"a":{}}`: 3, `{"a":"x,{[\"]"}`: 2, `[{},{}]`: 5,
	} {
		if got := Values([]byte(in)); got != want {
			t.Errorf("Values(%s) = %d, want %d", in, got, want)
		}
	}
}
