package main

import (
	"bytes"
	"context"
	"fmt"
	"github.com/mediaspec/mediaspec/conformance"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mediaspec/mediaspec/mock"
	"github.com/mediaspec/mediaspec/mock/clock"
	"github.com/mediaspec/mediaspec/proxy"
	"github.com/mediaspec/mediaspec/receiver"
	"github.com/mediaspec/mediaspec/spec"
	"github.com/mediaspec/mediaspec/spec/diff"
)

// repoRoot is the repository's root, seen from this package's directory (where go test runs).
const repoRoot = "../.."

// skipMarker, on the line before a fenced block, keeps the block out of the docs walk; the reason
// in parentheses is required.
var skipMarker = regexp.MustCompile(`^\s*<!-- docs-walk: skip \(([^)]+)\) -->\s*$`)

// docPage is one page of the documentation: README.md or a file of docs/.
type docPage struct {
	path   string // relative to the repository root
	text   string
	blocks []docBlock
}

// docBlock is a fenced code block of a page.
type docBlock struct {
	lang string
	line int    // the fence's line, from 1
	code string // the block's lines, their common indentation removed
	skip string // the skip marker's reason, "" for a block the walk runs
}

// docPages reads README.md and every docs/*.md.
func docPages(t *testing.T) []docPage {
	t.Helper()
	paths := []string{"README.md"}
	more, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range more {
		rel, _ := filepath.Rel(repoRoot, p)
		paths = append(paths, filepath.ToSlash(rel))
	}
	var pages []docPage
	for _, p := range paths {
		b, err := os.ReadFile(filepath.Join(repoRoot, p))
		if err != nil {
			t.Fatal(err)
		}
		pages = append(pages, docPage{path: p, text: string(b), blocks: fencedBlocks(string(b))})
	}
	return pages
}

// fencedBlocks finds the ``` blocks of a Markdown text, indented ones (inside list items) included.
func fencedBlocks(text string) []docBlock {
	lines := strings.Split(text, "\n")
	var out []docBlock
	for i := 0; i < len(lines); i++ {
		trimmed := strings.TrimLeft(lines[i], " ")
		if !strings.HasPrefix(trimmed, "```") {
			continue
		}
		indent := len(lines[i]) - len(trimmed)
		b := docBlock{lang: strings.TrimSpace(strings.TrimPrefix(trimmed, "```")), line: i + 1}
		for j := i - 1; j >= 0; j-- {
			if strings.TrimSpace(lines[j]) == "" {
				continue
			}
			if m := skipMarker.FindStringSubmatch(lines[j]); m != nil {
				b.skip = m[1]
			}
			break
		}
		var code []string
		for i++; i < len(lines) && strings.TrimSpace(lines[i]) != "```"; i++ {
			l := lines[i]
			if len(l) >= indent && strings.TrimSpace(l[:indent]) == "" {
				l = l[indent:]
			}
			code = append(code, l)
		}
		b.code = strings.Join(code, "\n") + "\n"
		out = append(out, b)
	}
	return out
}

// TestDocsWalk runs each page's sh blocks in order, in one bash session per page, as a person
// pastes them: `mediaspec` (and `go run ./cmd/mediaspec`) is this package built, the working
// directory holds the repository's files (the walks read fixtures/ and spec/), and the first
// command that fails fails the page. Every file a walk leaves behind must be one .gitignore covers.
func TestDocsWalk(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the docs walk builds the binary and runs the mock at real time")
	}
	for _, tool := range []string{"bash", "curl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the docs walk needs %s, which is not installed", tool)
		}
	}
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "mediaspec"), ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, page := range docPages(t) {
		var script strings.Builder
		n := 0
		for _, b := range page.blocks {
			if b.lang == "sh" && b.skip == "" {
				fmt.Fprintf(&script, "\n# ---- %s:%d\n%s", page.path, b.line, b.code)
				n++
			}
		}
		if n == 0 {
			continue
		}
		t.Run(page.path, func(t *testing.T) {
			t.Parallel()
			work := t.TempDir()
			for _, e := range entries {
				if e.Name() == ".git" {
					continue
				}
				if err := os.Symlink(filepath.Join(root, e.Name()), filepath.Join(work, e.Name())); err != nil {
					t.Fatal(err)
				}
			}
			prelude := `set -e
trap 'echo "docs-walk: this command failed: $BASH_COMMAND" >&2' ERR
go() { if [ "$1" = run ] && [ "$2" = ./cmd/mediaspec ]; then shift 2; mediaspec "$@"; else command go "$@"; fi; }
`
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "bash", "-c", prelude+script.String())
			cmd.Dir = work
			cmd.Env = append(os.Environ(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "HOOK_PORT="+freePort(t))
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			// The walk's background jobs (mocks, receivers) go with its process group.
			cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := cmd.Run()
			if cmd.Process != nil {
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			}
			if err != nil {
				t.Fatalf("the walk of %s failed (%v); its output:\n%s", page.path, err, tail(out.String(), 60))
			}
			left, err := os.ReadDir(work)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range left {
				if e.Type()&os.ModeSymlink != 0 {
					continue
				}
				name := e.Name()
				if e.IsDir() {
					name += "/"
				}
				check := exec.Command("git", "check-ignore", "-q", "--no-index", name)
				check.Dir = root
				if err := check.Run(); err != nil {
					t.Errorf("the walk of %s leaves %s, which .gitignore does not cover", page.path, name)
				}
			}
		})
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = append([]string{"..."}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}

// commandFlags runs `mediaspec CMD -h` and returns each flag's name and usage text.
func commandFlags(t *testing.T, cmd string) map[string]string {
	t.Helper()
	out, _, err := run(t, cmd, "-h")
	if err != nil {
		t.Fatalf("%s -h: %v", cmd, err)
	}
	flags := map[string]string{}
	name := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "  -") {
			head, usage, _ := strings.Cut(strings.TrimPrefix(l, "  -"), "\t") // a one-letter flag's usage is on its line
			name = strings.Fields(head)[0]
			flags[name] = strings.TrimSpace(usage) + " "
			continue
		}
		if name != "" && strings.HasPrefix(l, "    \t") {
			flags[name] += strings.TrimSpace(l) + " "
		}
	}
	return flags
}

// invocation finds a mediaspec command line in code: `mediaspec CMD ...` or
// `go run ./cmd/mediaspec CMD ...`.
var invocation = regexp.MustCompile(`(?:^|[\s(` + "`" + `$"])(?:go run \./cmd/)?mediaspec ([a-z][a-z-]*)((?:[^|;&>#\n` + "`" + `)]|\\\n)*)`)

// docCode is the code of every page: its fenced blocks of shell and its inline code spans.
func docCode(pages []docPage) map[string][]string {
	inline := regexp.MustCompile("`([^`\n]+)`")
	code := map[string][]string{}
	for _, p := range pages {
		for _, b := range p.blocks {
			if b.lang == "sh" || b.lang == "yaml" {
				code[p.path] = append(code[p.path], b.code)
			}
		}
		outside := p.text
		for _, b := range p.blocks {
			outside = strings.Replace(outside, b.code, "", 1)
		}
		for _, m := range inline.FindAllStringSubmatch(outside, -1) {
			code[p.path] = append(code[p.path], m[1])
		}
	}
	return code
}

// The documentation names only commands and flags the binary has: every `mediaspec CMD --flag` in a
// page's code is checked against CMD -h.
func TestDocsNameCommandsAndFlagsThatExist(t *testing.T) {
	cmds := commands()
	flags := map[string]map[string]string{}
	for name := range cmds {
		flags[name] = commandFlags(t, name)
	}
	flagWord := regexp.MustCompile(`(?:^|\s)--?([a-z][a-z0-9-]*)`)
	for page, snippets := range docCode(docPages(t)) {
		for _, code := range snippets {
			for _, m := range invocation.FindAllStringSubmatch(code, -1) {
				cmd, rest := m[1], m[2]
				if rest != "" && !strings.ContainsAny(rest[:1], " \t\\\n") {
					continue // not a command word: "mediaspec v0.1.0", "mediaspec.receiver"
				}
				if _, ok := cmds[cmd]; !ok {
					if cmd == "is" || cmd == "receive:" {
						continue // prose the mock or receiver prints ("mediaspec mock is serving …")
					}
					t.Errorf("%s: `mediaspec %s`: no such command", page, cmd)
					continue
				}
				for _, f := range flagWord.FindAllStringSubmatch(rest, -1) {
					if _, ok := flags[cmd][f[1]]; !ok && f[1] != "h" {
						t.Errorf("%s: `mediaspec %s` has no flag --%s", page, cmd, f[1])
					}
				}
			}
		}
	}
}

// Every flag of the commands that run something has its MEDIASPEC_* variable, named in -h, as the
// README says.
func TestEveryFlagHasAnEnvironmentVariable(t *testing.T) {
	for _, cmd := range []string{"check", "mock", "proxy", "receive", "check-receiver", "diff"} {
		for name, usage := range commandFlags(t, cmd) {
			if !strings.Contains(usage, "[$MEDIASPEC_") {
				t.Errorf("%s --%s names no MEDIASPEC_* variable in -h: %q", cmd, name, usage)
			}
		}
	}
}

// Every command is listed where a reader looks for the list: the layout table of
// docs/development.md, the package comment of main.go, and -h.
func TestEveryCommandIsListed(t *testing.T) {
	var names []string
	for n := range commands() {
		names = append(names, n)
	}
	sort.Strings(names)
	dev, err := os.ReadFile(filepath.Join(repoRoot, "docs", "development.md"))
	if err != nil {
		t.Fatal(err)
	}
	var layout string
	for _, l := range strings.Split(string(dev), "\n") {
		if strings.HasPrefix(l, "| `cmd/mediaspec` |") {
			layout = l
		}
	}
	mainGo, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	help, _, _ := run(t, "--help")
	for _, n := range names {
		if !strings.Contains(layout, "`"+n+"`") {
			t.Errorf("the layout row of docs/development.md does not list %s: %q", n, layout)
		}
		if !strings.Contains(string(mainGo), "//   - "+n+":") {
			t.Errorf("main.go's package comment does not list %s", n)
		}
		if !strings.Contains(help, "  "+n+" ") {
			t.Errorf("mediaspec --help does not list %s", n)
		}
	}
}

// The figures of the documentation come from the code: each phrase below is built from the value
// the code holds, and must be on its page (spaces and line breaks alike). Counts that change with
// every rule or spec added are not written down at all.
func TestDocsFiguresComeFromTheCode(t *testing.T) {
	goMod, err := os.ReadFile(filepath.Join(repoRoot, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goVersion := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(goMod)
	if goVersion == nil {
		t.Fatal("go.mod has no go directive")
	}
	want := map[string][]string{
		"README.md": {
			"Go " + string(goVersion[1]),
			"cmd/mediaspec@" + release,
			"mediaspec " + release + " (contract " + spec.Version + ")",
		},
		"docs/development.md": {
			"`info.version` " + spec.Version,
			"(`" + release + "`)",
		},
		"docs/operations.md": {
			fmt.Sprintf("`--time-scale` is at most %d", clock.MaxScale),
			fmt.Sprintf("more than %d years ahead", clock.MaxOffset/(365*24*time.Hour)),
			fmt.Sprintf("Headers over %d KiB", mock.DefaultLimits.MaxHeaderBytes>>10),
			fmt.Sprintf("`D` is at least `%s`", mock.MinRetain),
		},
		"docs/check.md": {
			fmt.Sprintf("runs in %d processes on a machine of %d CPUs or more", embeddedProcs, embeddedProcs),
			fmt.Sprintf("| %d MiB | `--max-json-bytes` |", conformance.DefaultMaxJSONBytes>>20),
			fmt.Sprintf("one per %d bytes of `--max-json-bytes` (%s)", conformance.BytesPerJSONValue, thousands(int64(conformance.DefaultMaxJSONBytes)/conformance.BytesPerJSONValue)),
			fmt.Sprintf("| %d MiB (the mock's largest file is 14.4 MB) | `--max-answer-bytes` |", conformance.DefaultMaxAnswerBytes>>20),
			fmt.Sprintf("an answer's header block | %d KiB |", conformance.MaxAnswerHeaderBytes>>10),
			fmt.Sprintf("| %s | `--request-timeout` |", conformance.DefaultRequestTimeout),
			fmt.Sprintf("body %d MiB, header block %d KiB", receiver.DefaultMaxBody>>20, conformance.MaxRequestHeaderBytes>>10),
			fmt.Sprintf("%d MiB of kept deliveries", receiver.MaxRecordBytes>>20),
		},
		"docs/proxy.md": {
			fmt.Sprintf("an upstream answer's header block | %d KiB |", proxy.MaxAnswerHeader>>10),
			fmt.Sprintf("| %d KiB | the answer, forwarded whole", proxy.MaxAnswerBody>>10),
		},
		"docs/diff.md": {
			fmt.Sprintf("a body over %d MiB (`--max-answer-bytes` raises it)", diff.DefaultMaxBody>>20),
		},
		"docs/mock.md": {
			fmt.Sprintf("a body over %d MiB is refused (`bad_body (body over %d bytes)`)", receiver.DefaultMaxBody>>20, receiver.DefaultMaxBody),
			fmt.Sprintf("at most %d MiB of bodies and headers", receiver.MaxRecordBytes>>20),
		},
		"docs/audit.md": {
			fmt.Sprintf("the last %d calls per key, at most %d keys, and at most %d distinct findings", mock.AuditWindow, mock.AuditMaxKeys, mock.AuditMaxFindings),
		},
	}
	count := regexp.MustCompile(`\b\d[\d,]* (rules|specs|wrong servers)\b`)
	for _, p := range docPages(t) {
		flat := strings.Join(strings.Fields(p.text), " ")
		for _, phrase := range want[p.path] {
			if !strings.Contains(flat, phrase) {
				t.Errorf("%s does not say %q (what the code holds)", p.path, phrase)
			}
		}
		if m := count.FindString(flat); m != "" {
			t.Errorf("%s writes down a count that drifts: %q", p.path, m)
		}
	}
	for page := range want {
		if !slices.ContainsFunc(docPages(t), func(p docPage) bool { return p.path == page }) {
			t.Errorf("no page %s", page)
		}
	}
}

// thousands writes n with a comma between each group of three digits.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// Every relative link of the documentation leads to a file of the repository.
func TestDocsLinksResolve(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)#\s]+)(#[^)]*)?\)`)
	for _, p := range docPages(t) {
		for _, m := range link.FindAllStringSubmatch(p.text, -1) {
			target := m[1]
			if strings.Contains(target, "://") {
				continue
			}
			if _, err := os.Stat(filepath.Join(repoRoot, filepath.Dir(p.path), target)); err != nil {
				t.Errorf("%s links to %s, which does not exist", p.path, target)
			}
		}
	}
}
