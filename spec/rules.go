package spec

import (
	"bytes"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"

	yaml "go.yaml.in/yaml/v3"
)

// Rule is one normative statement of the interface, as written in rules.yaml.
type Rule struct {
	ID        string   `yaml:"id" json:"id"`               // area prefix and number, e.g. AUTH-004
	Level     string   `yaml:"level" json:"level"`         // MUST, SHOULD or MAY
	Section   string   `yaml:"section" json:"section"`     // the interface text's section that states it
	Statement string   `yaml:"statement" json:"statement"` // what the text requires, in its words
	Needs     []string `yaml:"needs" json:"needs"`         // what a test needs to check it (keys of Catalogue.Needs)
	// Interpretation is the reading we test where the interface spec is ambiguous or contradicts
	// itself; empty when it is plain.
	Interpretation string `yaml:"interpretation,omitempty" json:"interpretation,omitempty"`
	// Basis says what the interpretation records: BasisText (our reading of what the interface text
	// says) or BasisReference (the reference's own choice where the text is silent or says "not
	// shown"); set exactly when Interpretation is.
	Basis string `yaml:"basis,omitempty" json:"basis,omitempty"`
	// Judged, set exactly when Basis is BasisReference, says how the suite judges the rule against
	// a server it does not hold to the reference (a run without --strict): JudgedOpen, JudgedTextPart
	// or JudgedStrictOnly.
	Judged string `yaml:"judged,omitempty" json:"judged,omitempty"`
	// Unobservable says why a black-box test cannot check the rule; empty when one can.
	Unobservable string `yaml:"unobservable,omitempty" json:"unobservable,omitempty"`
	// Audit, on a client obligation the mock can watch, says what `mediaspec mock --audit` reports
	// as a finding of the rule; empty when the audit does not watch it.
	Audit string `yaml:"audit,omitempty" json:"audit,omitempty"`
}

// Area is the area prefix of the rule's id (AUTH for AUTH-001, GEN-SUBMIT for GEN-SUBMIT-007).
func (r Rule) Area() string {
	i := strings.LastIndexByte(r.ID, '-')
	if i < 0 {
		return r.ID
	}
	return r.ID[:i]
}

// Observable reports whether a black-box test can check the rule.
func (r Rule) Observable() bool { return r.Unobservable == "" }

// Audited reports whether the mock's client audit watches the rule.
func (r Rule) Audited() bool { return r.Audit != "" }

// Catalogue is the parsed rule catalogue.
type Catalogue struct {
	Version int               `yaml:"version" json:"version"` // the catalogue's format version
	Areas   map[string]string `yaml:"areas" json:"areas"`     // area prefix -> title
	Needs   map[string]string `yaml:"needs" json:"needs"`     // need -> what it means for a test
	Rules   []Rule            `yaml:"rules" json:"rules"`     // every rule, in the file's order
	byID    map[string]int
}

// ruleIDPattern is the form of a rule id: an area prefix of one or two upper-case words and a
// three-digit number. Compiled when the rules are first checked, not in every command's init.
var ruleIDPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Z]+(-[A-Z]+)?-[0-9]{3}$`) })

// Levels are the requirement levels a rule may have.
var Levels = []string{"MUST", "SHOULD", "MAY"}

// The bases of an interpretation (Rule.Basis).
const (
	BasisText      = "text"      // how we read what the interface text says
	BasisReference = "reference" // the reference's own choice where the text is silent or "not shown"
)

// How the suite judges a rule of basis reference (Rule.Judged) on a run that is not strict.
const (
	// JudgedOpen: every assertion its specs make follows from the text; the reference's choice in
	// the interpretation is only how the mock answers where the text lets it.
	JudgedOpen = "open"
	// JudgedTextPart: its specs assert what the text states always, and the reference's own part
	// only under --strict (an advisory otherwise: framework Spec.ReferenceOnly).
	JudgedTextPart = "text-part"
	// JudgedStrictOnly: the rule is the reference's choice through and through; its specs assert it
	// only under --strict and the run leaves it undecided (skipped with the reason) otherwise.
	JudgedStrictOnly = "strict-only"
)

// Judgements are the values of Rule.Judged.
var Judgements = []string{JudgedOpen, JudgedTextPart, JudgedStrictOnly}

// LoadRules parses and checks the embedded rule catalogue.
func LoadRules() (*Catalogue, error) { return ParseRules(RulesYAML()) }

// ParseRules parses a rule catalogue and checks it: unknown keys refused, ids well-formed and
// unique, each id's area declared, levels known, every need declared, statements present, audit
// only on unobservable (client obligation) rules.
func ParseRules(data []byte) (*Catalogue, error) {
	var c Catalogue
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("spec: rules: %w", err)
	}
	if c.Version != 1 {
		return nil, fmt.Errorf("spec: rules: version %d, want 1", c.Version)
	}
	var problems []string
	c.byID = make(map[string]int, len(c.Rules))
	for i, r := range c.Rules {
		where := fmt.Sprintf("rule %d (%s)", i+1, r.ID)
		if !ruleIDPattern().MatchString(r.ID) {
			problems = append(problems, where+": id does not match "+ruleIDPattern().String())
		}
		if _, dup := c.byID[r.ID]; dup {
			problems = append(problems, where+": duplicate id")
		}
		c.byID[r.ID] = i
		if _, ok := c.Areas[r.Area()]; !ok {
			problems = append(problems, where+": area "+r.Area()+" is not declared under areas")
		}
		if !contains(Levels, r.Level) {
			problems = append(problems, where+": level "+r.Level+" is not MUST, SHOULD or MAY")
		}
		if strings.TrimSpace(r.Section) == "" || strings.TrimSpace(r.Statement) == "" {
			problems = append(problems, where+": section and statement are required")
		}
		switch {
		case r.Interpretation == "" && r.Basis != "":
			problems = append(problems, where+": basis without an interpretation")
		case r.Interpretation != "" && r.Basis != BasisText && r.Basis != BasisReference:
			problems = append(problems, where+": an interpretation needs basis text or reference, not "+strconv.Quote(r.Basis))
		}
		switch {
		case r.Basis == BasisReference && !contains(Judgements, r.Judged):
			problems = append(problems, where+": basis reference needs judged open, text-part or strict-only "+
				"(how a run without --strict judges it), not "+strconv.Quote(r.Judged))
		case r.Basis != BasisReference && r.Judged != "":
			problems = append(problems, where+": judged is for basis reference only")
		}
		if r.Audited() && r.Observable() {
			problems = append(problems, where+": audit is for client obligations; the rule needs unobservable saying so")
		}
		for _, n := range r.Needs {
			if _, ok := c.Needs[n]; !ok {
				problems = append(problems, where+": need "+n+" is not declared under needs")
			}
		}
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("spec: rules: %d problems:\n  %s", len(problems), strings.Join(problems, "\n  "))
	}
	return &c, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Get returns the rule with the given id.
func (c *Catalogue) Get(id string) (Rule, bool) {
	i, ok := c.byID[id]
	if !ok {
		return Rule{}, false
	}
	return c.Rules[i], true
}

// AreaNames returns the declared area prefixes, sorted.
func (c *Catalogue) AreaNames() []string {
	out := make([]string, 0, len(c.Areas))
	for a := range c.Areas {
		out = append(out, a)
	}
	sort.Strings(out)
	return out
}

// RuleFilter selects rules; a zero field matches everything.
type RuleFilter struct {
	Area       string // exact area prefix, case-insensitive
	Level      string // MUST, SHOULD or MAY, case-insensitive
	Need       string // rules that have this need
	Text       string // substring of id, statement, section or interpretation, case-insensitive
	Observable *bool  // only observable (true) or only unobservable (false) rules
}

// Filter returns the rules that match f, in catalogue order.
func (c *Catalogue) Filter(f RuleFilter) []Rule {
	var out []Rule
	text := strings.ToLower(f.Text)
	for _, r := range c.Rules {
		if f.Area != "" && !strings.EqualFold(r.Area(), f.Area) {
			continue
		}
		if f.Level != "" && !strings.EqualFold(r.Level, f.Level) {
			continue
		}
		if f.Need != "" && !contains(r.Needs, f.Need) {
			continue
		}
		if f.Observable != nil && r.Observable() != *f.Observable {
			continue
		}
		if text != "" && !strings.Contains(strings.ToLower(r.ID+"\n"+r.Section+"\n"+r.Statement+"\n"+r.Interpretation), text) {
			continue
		}
		out = append(out, r)
	}
	return out
}
