package spec

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// Every repository file rules.yaml cites exists, and no line names a path of a machine.
func TestRulesCiteOnlyFilesThatExist(t *testing.T) {
	data, err := os.ReadFile("rules.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`[A-Za-z0-9_-]+(/[A-Za-z0-9_.-]+)*\.(md|yaml|go)\b`).FindAllString(string(data), -1) {
		if m == "rules.yaml" {
			continue
		}
		if _, err := os.Stat(filepath.Join("..", m)); err != nil {
			t.Errorf("rules.yaml cites %s, which is not in the repository", m)
		}
	}
	if loc := regexp.MustCompile(`(^|[\s(])/(work|home|root|tmp|Users)/`).FindIndex(data); loc != nil {
		t.Errorf("rules.yaml names a machine path: %q", data[loc[0]:min(len(data), loc[1]+40)])
	}
}
