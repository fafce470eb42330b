package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/mediaspec/mediaspec/conformance"
	"github.com/mediaspec/mediaspec/report"
	"github.com/mediaspec/mediaspec/spec"
	yaml "go.yaml.in/yaml/v3"
)

func runVersion(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("version", "", stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if rev := buildRevision(); rev != "" {
		fmt.Fprintf(stdout, "mediaspec %s (commit %s; contract %s)\n", Version(), rev, spec.Version)
		return nil
	}
	fmt.Fprintf(stdout, "mediaspec %s (contract %s)\n", Version(), spec.Version)
	return nil
}

// runSpec prints the embedded REST description (or the control API description) as YAML or JSON.
func runSpec(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("spec", "[--control | --test-mode] [--format yaml|json]", stderr)
	control := fs.Bool("control", false, "print the test-control API description instead of the REST description")
	testMode := fs.Bool("test-mode", false, "print the contract of test-mode inputs (the Mediaspec-Test-Input header a staging server may honour for its test keys) instead of the REST description")
	format := fs.String("format", "yaml", "output format: yaml (as written) or json")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	data := spec.OpenAPIYAML()
	switch {
	case *control && *testMode:
		return usageError{msg: "--control and --test-mode: print one document at a time"}
	case *control:
		data = spec.ControlYAML()
	case *testMode:
		data = spec.TestModeYAML()
	}
	switch strings.ToLower(*format) {
	case "yaml":
		_, err := stdout.Write(data)
		return err
	case "json":
		doc, err := spec.LoadDocument(ctx, data)
		if err != nil {
			return err
		}
		out, err := json.MarshalIndent(doc, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s\n", out)
		return err
	default:
		return usageError{msg: fmt.Sprintf("--format %q: want yaml or json", *format)}
	}
}

// runRules lists the rule catalogue.
func runRules(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("rules", "[--area A] [--level L] [--need N] [--grep TEXT] [--unobservable|--observable] [--id ID] [--format table|yaml|json] [--areas] [--by-need]", stderr)
	area := fs.String("area", "", "only rules of this area prefix (e.g. AUTH)")
	level := fs.String("level", "", "only rules of this level: MUST, SHOULD or MAY")
	need := fs.String("need", "", "only rules with this need (e.g. control)")
	grep := fs.String("grep", "", "only rules whose id, section, statement or interpretation contains this text")
	unobs := fs.Bool("unobservable", false, "only rules a black-box test cannot observe")
	obs := fs.Bool("observable", false, "only rules a black-box test can observe")
	id := fs.String("id", "", "print one rule in full")
	format := fs.String("format", "table", "output format: table, yaml or json")
	areas := fs.Bool("areas", false, "list the areas with their rule counts instead of rules")
	byNeed := fs.Bool("by-need", false, "map the text rules by what a run must offer to judge them fully, as the specs declare it (keys only; the profile: read key, second workspace, receiver, declared fixtures; test-mode inputs; control API; budget and slow counted)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *byNeed {
		return printRulesByNeed(ctx, stdout, *format)
	}
	if *unobs && *obs {
		return usageError{msg: "--unobservable and --observable exclude each other"}
	}
	cat, err := spec.LoadRules()
	if err != nil {
		return err
	}
	if *areas {
		counts := map[string]int{}
		for _, r := range cat.Rules {
			counts[r.Area()]++
		}
		for _, a := range cat.AreaNames() {
			fmt.Fprintf(stdout, "%-12s %4d  %s\n", a, counts[a], cat.Areas[a])
		}
		fmt.Fprintf(stdout, "%-12s %4d\n", "total", len(cat.Rules))
		return nil
	}
	var rules []spec.Rule
	if *id != "" {
		r, ok := cat.Get(strings.ToUpper(*id))
		if !ok {
			return fmt.Errorf("no rule %q in the catalogue", *id)
		}
		rules = []spec.Rule{r}
		if *format == "table" {
			*format = "yaml"
		}
	} else {
		f := spec.RuleFilter{Area: *area, Level: *level, Need: *need, Text: *grep}
		if *unobs || *obs {
			v := *obs
			f.Observable = &v
		}
		if f.Level != "" && !validLevel(f.Level) {
			return usageError{msg: fmt.Sprintf("--level %q: want MUST, SHOULD or MAY", f.Level)}
		}
		if f.Area != "" {
			if _, ok := cat.Areas[strings.ToUpper(f.Area)]; !ok {
				return usageError{msg: fmt.Sprintf("--area %q: not an area of the catalogue (%s)", f.Area, strings.Join(cat.AreaNames(), ", "))}
			}
		}
		if f.Need != "" {
			if _, ok := cat.Needs[f.Need]; !ok {
				return usageError{msg: fmt.Sprintf("--need %q: not a need of the catalogue", f.Need)}
			}
		}
		rules = cat.Filter(f)
	}
	switch strings.ToLower(*format) {
	case "table":
		for _, r := range rules {
			mark := ""
			if !r.Observable() {
				mark = " (unobservable)"
			}
			needs := ""
			if len(r.Needs) > 0 {
				needs = " [" + strings.Join(r.Needs, ",") + "]"
			}
			fmt.Fprintf(stdout, "%-14s %-6s %s%s%s\n", r.ID, r.Level, r.Statement, needs, mark)
		}
		fmt.Fprintf(stdout, "%d rules\n", len(rules))
		return nil
	case "yaml":
		enc := yaml.NewEncoder(stdout)
		enc.SetIndent(2)
		if err := enc.Encode(rules); err != nil {
			return err
		}
		return enc.Close()
	case "json":
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rules)
	default:
		return usageError{msg: fmt.Sprintf("--format %q: want table, yaml or json", *format)}
	}
}

func validLevel(l string) bool {
	for _, x := range spec.Levels {
		if strings.EqualFold(x, l) {
			return true
		}
	}
	return false
}

// byNeedOrder is the order rulesByNeed prints its groups in: the tiers from what every target
// offers (keys) to the control API, then the rules no target but the reference is held to.
var byNeedOrder = []string{string(report.TierKeys), string(report.TierProfile), string(report.TierTestInputs),
	string(report.TierTestHelpers), string(report.TierControl), report.NeedStrictOnly, report.NeedNoSpec}

// byNeedTitles say each group of rulesByNeed in words.
var byNeedTitles = map[string]string{
	report.NeedStrictOnly: "strict-only: the reference's own choices (--strict, our own mock)",
	report.NeedNoSpec:     "no spec checks them",
}

func byNeedTitle(g string) string {
	if t, ok := report.TierTitles[report.Tier(g)]; ok {
		if g == string(report.TierKeys) {
			return "tier keys: " + t
		}
		return "+ tier " + g + ": " + t
	}
	return byNeedTitles[g]
}

// printRulesByNeed prints the observable rules grouped by the lowest tier that judges them fully:
// the highest tier among the needs of every spec that checks them (report.TierOfNeed); a group's
// rules are judged fully by a run that offers its tier and every tier below, and the run settings
// its specs need too (--budget, --slow: counted on the group's line). Format table (with the running
// total of text rules a run offering that much can judge) or json ({"tier": ["ID", ...]}).
func printRulesByNeed(ctx context.Context, stdout io.Writer, format string) error {
	cat, err := spec.LoadRules()
	if err != nil {
		return err
	}
	needs, specs, err := conformance.RuleNeeds(ctx)
	if err != nil {
		return err
	}
	groups := map[string][]string{}
	settings := map[string]map[string]int{} // group -> run setting -> rules
	texts := 0
	for _, r := range cat.Rules {
		rr := report.Rule(r)
		if !rr.Observable() {
			continue
		}
		g := string(report.TierKeys)
		switch {
		case !rr.OfText():
			g = report.NeedStrictOnly
		case specs[r.ID] == 0:
			g = report.NeedNoSpec
		default:
			tier := report.TierKeys
			for _, n := range needs[r.ID] {
				if t, ok := report.TierOfNeed(n); ok && tier.Less(t) {
					tier = t
				}
			}
			g = string(tier)
			for _, n := range needs[r.ID] {
				if _, ok := report.TierOfNeed(n); !ok {
					if settings[g] == nil {
						settings[g] = map[string]int{}
					}
					settings[g][n]++
				}
			}
		}
		if rr.OfText() {
			texts++
		}
		groups[g] = append(groups[g], r.ID)
	}
	switch strings.ToLower(format) {
	case "json":
		out := map[string][]string{}
		for g, ids := range groups {
			out[g] = ids
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	case "table":
	default:
		return usageError{msg: fmt.Sprintf("--format %q with --by-need: want table or json", format)}
	}
	total := 0
	for _, g := range byNeedOrder {
		ids := groups[g]
		if len(ids) == 0 {
			continue
		}
		line := fmt.Sprintf("%s: %d rules", byNeedTitle(g), len(ids))
		if g != report.NeedStrictOnly && g != report.NeedNoSpec {
			total += len(ids)
			line += fmt.Sprintf(" (so far %d of %d text rules)", total, texts)
		}
		if set := settings[g]; len(set) > 0 {
			var parts []string
			for _, n := range []string{report.NeedBudget, report.NeedSlow} {
				if set[n] > 0 {
					parts = append(parts, fmt.Sprintf("%d of them need %s", set[n], map[string]string{report.NeedBudget: "--budget", report.NeedSlow: "--slow, --real-time or --long"}[n]))
				}
			}
			if len(parts) > 0 {
				line += "; " + strings.Join(parts, ", ")
			}
		}
		fmt.Fprintln(stdout, line)
		for i := 0; i < len(ids); i += 10 {
			fmt.Fprintln(stdout, "  "+strings.Join(ids[i:min(i+10, len(ids))], " "))
		}
	}
	return nil
}
