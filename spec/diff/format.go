package diff

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Formats are the output formats of a report.
var Formats = []string{"text", "json", "markdown"}

// Write renders the report in format (text, json or markdown). Compatible findings are listed in
// full only in json, and in text and markdown when verbose is set; the others are counted.
func (r *Report) Write(w io.Writer, format string, verbose bool) error {
	switch format {
	case "json":
		b, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	case "markdown":
		return r.writeMarkdown(w, verbose)
	case "text", "":
		return r.writeText(w, verbose)
	}
	return fmt.Errorf("unknown format %q: want one of %s", format, strings.Join(Formats, ", "))
}

// Summary is the one-line verdict: breaking or compatible, and the counts by verdict.
func (r *Report) Summary() string {
	verdict := "compatible"
	if r.Breaking {
		verdict = "BREAKING"
	}
	return fmt.Sprintf("%s: %d breaking, %d need a minor bump, %d allowed by the bump, %d notes, %d compatible",
		verdict, r.Count(Breaking), r.Count(NeedsMinor), r.Count(Allowed), r.Count(Note), r.Count(Compatible))
}

func (r *Report) sides() string {
	side := func(s Side) string {
		if s.Version == "" {
			return s.Name
		}
		return fmt.Sprintf("%s (%s)", s.Name, s.Version)
	}
	return side(r.Old) + " -> " + side(r.New)
}

func (r *Report) shown(verbose bool) []Finding {
	var out []Finding
	for _, f := range r.Findings {
		if verbose || f.Verdict != Compatible {
			out = append(out, f)
		}
	}
	return out
}

func (f Finding) where() string {
	if len(f.Operations) <= 1 {
		return f.Path
	}
	const shown = 3
	if len(f.Operations) <= shown {
		return strings.Join(f.Operations, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(f.Operations[:shown], ", "), len(f.Operations)-shown)
}

func (r *Report) writeText(w io.Writer, verbose bool) error {
	fmt.Fprintf(w, "mediaspec diff (%s): %s\n", r.Kind, r.sides())
	for _, f := range r.shown(verbose) {
		fmt.Fprintf(w, "%-16s %s %s: %s\n    %s\n", f.Verdict, f.Rule, f.Change, f.where(), f.Message)
	}
	_, err := fmt.Fprintln(w, r.Summary())
	return err
}

func (r *Report) writeMarkdown(w io.Writer, verbose bool) error {
	icon := ":white_check_mark:"
	if r.Breaking {
		icon = ":x:"
	}
	fmt.Fprintf(w, "### %s Contract diff (%s)\n\n`%s`\n\n**%s**\n", icon, r.Kind, r.sides(), r.Summary())
	rows := r.shown(verbose)
	if len(rows) > 0 {
		fmt.Fprint(w, "\n| verdict | rule | change | where | what |\n|---|---|---|---|---|\n")
		for _, f := range rows {
			fmt.Fprintf(w, "| %s | %s | `%s` | %s | %s |\n", f.Verdict, f.Rule, f.Change, mdCell(f.where()), mdCell(f.Message))
		}
	}
	if n := r.Count(Compatible); n > 0 && !verbose {
		fmt.Fprintf(w, "\n%d compatible change(s) not listed (run with `--verbose` to list them).\n", n)
	}
	return nil
}

func mdCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}
