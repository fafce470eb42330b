package judge_test

import (
	"fmt"

	"github.com/mediaspec/mediaspec/spec/judge"
)

func ExampleFieldKind() {
	k, _ := judge.FieldKind("asset_id")
	fmt.Println(k.Prefix, k.Rule, k.Pattern())
	fmt.Println(k.Is("ast_0123456789abcdef0123456789abcdef"), k.Is("AST_0123456789abcdef0123456789abcdef"))
	// Output:
	// ast_ ID-004 ^ast_[0-9a-f]{32}$
	// true false
}
