package framework

import (
	"regexp"
	"sync"
)

// error.message is "one safe sentence" (interface text, Errors): a reader sees it, so it never
// carries what a server leaks when it renders an internal error as is: a stack trace, a path of a
// file on the server, or SQL.
var unsafeMessage = sync.OnceValue(func() []unsafeKind {
	return []unsafeKind{
		{"a line break (a message is one sentence; a trace has many lines)", regexp.MustCompile(`[\r\n]`)},
		{"a stack trace", regexp.MustCompile(`goroutine \d+ \[|\bpanic: |Traceback \(most recent call last\)|\bat [\w$.<>]+\([^)]*:\d+\)|\bruntime/debug\.|\bruntime\.gopanic\b|Exception in thread|\bstack trace\b`)},
		{"a source file and line", regexp.MustCompile(`\b[\w./-]+\.(?:go|py|rb|js|ts|java|php|rs|c|cc|cpp|cs|kt|scala|ex):\d+`)},
		{"a file path of the server", regexp.MustCompile(`(?:^|[\s"'(=:])/(?:home|usr|var|tmp|root|opt|srv|etc|Users|app|src|go|build|workspace)/[\w.@-]+|(?:^|[\s"'(=:])/(?:[\w.@-]+/)+[\w.@-]+\.(?:go|py|rb|js|ts|java|php|rs|c|cc|cpp|cs|kt|scala|ex|so|sqlite|db)\b|\b[A-Za-z]:\\[\w$]`)},
		{"SQL", regexp.MustCompile(`\bSELECT\b[^.]*\bFROM\b|\bINSERT INTO\b|\bUPDATE\s+\w+\s+SET\b|\bDELETE FROM\b|(?i:\bsqlstate\b|syntax error at or near|\bpq: |\bORA-\d{5}\b|duplicate key value violates|\bsqlite3?\b|\bno such table\b)`)},
	}
})

// unsafeKind is one kind of leak and the pattern that finds it.
type unsafeKind struct {
	what string
	re   *regexp.Regexp
}

// UnsafeMessage says what an error.message leaks ("a stack trace", "SQL", ...), or "" when it is
// one safe sentence.
func UnsafeMessage(msg string) string {
	for _, u := range unsafeMessage() {
		if u.re.MatchString(msg) {
			return u.what
		}
	}
	return ""
}
