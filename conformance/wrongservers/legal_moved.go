package wrongservers

import "strings"

// movedVariants are the rows of the wrong-server tables the text allows after all (Server.Legal),
// as legal variants in name order: checked on the specs of their rules' areas (a rule judged
// strict-only alone has no spec that runs without --strict), kept out of the combination (several
// rewrite the same answers).
func movedVariants() []Variant {
	var out []Variant
	for _, s := range defined() {
		if s.Legal == "" {
			continue
		}
		out = append(out, Variant{
			Name: s.Name, Change: s.Mistake + " (moved from the wrong servers: the text allows it)", Allows: s.Legal,
			API: s.API, Hooks: s.Hooks, Args: s.checkArgs, Filter: areasOf(s.Areas()), Apart: true,
		})
	}
	return out
}

// areasOf is the label filter of every spec of the areas (/^(ASSET|LINK)-/).
func areasOf(areas []string) string {
	return "/^(" + strings.Join(areas, "|") + ")-/"
}
