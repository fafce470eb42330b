package framework

import "testing"

func TestUnsafeMessage(t *testing.T) {
	for _, tc := range []struct{ msg, want string }{
		{"No generation gen_0123 in this workspace.", ""},
		{"No route GET /api/v1/nope. See GET /api/v1/openapi.json for the routes.", ""},
		{"Select a voice from GET /voices and send its voice_id.", ""},
		{"Update the config and set count to at most 4.", ""},
		{"Delete from the list the endpoints you no longer need; at most 10 per workspace.", ""},
		{"The service failed on its side; this is not a problem with your balance, key or request.", ""},
		{"read GET /presets/preset_ugc/templates.", ""},
		{"internal error\ngoroutine 1 [running]:", "a line break (a message is one sentence; a trace has many lines)"},
		{"panic: runtime error: invalid memory address or nil pointer dereference", "a stack trace"},
		{"goroutine 17 [running]: main.handler()", "a stack trace"},
		{"Traceback (most recent call last): File x", "a stack trace"},
		{"java.lang.NullPointerException at com.acme.Api.handle(Api.java:42)", "a stack trace"},
		{"failed in handlers.go:118", "a source file and line"},
		{"open /home/build/mediaspec/mock/api/handlers.go: no such file", "a file path of the server"},
		{"cannot read /var/lib/app/state", "a file path of the server"},
		{`C:\srv\api\handler.cs failed`, "a file path of the server"},
		{"query failed: SELECT credits FROM wallets WHERE id = $1", "SQL"},
		{"pq: duplicate key value violates unique constraint", "SQL"},
		{"ERROR: syntax error at or near \"FROM\" (SQLSTATE 42601)", "SQL"},
		{"INSERT INTO holds failed", "SQL"},
	} {
		if got := UnsafeMessage(tc.msg); got != tc.want {
			t.Errorf("UnsafeMessage(%q) = %q, want %q", tc.msg, got, tc.want)
		}
	}
}
