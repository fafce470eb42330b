package diff

import (
	"regexp"
	"strconv"
	"sync"
)

// version is a MAJOR.MINOR.PATCH version number; pre-release and build suffixes are ignored.
type version struct{ major, minor, patch int }

var versionPattern = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^v?(\d+)\.(\d+)(?:\.(\d+))?(?:[-+].*)?$`) })

// parseVersion reads a version number such as 1.2.0 (a missing patch reads as 0).
func parseVersion(s string) (version, bool) {
	m := versionPattern().FindStringSubmatch(s)
	if m == nil {
		return version{}, false
	}
	var v version
	var err error
	if v.major, err = strconv.Atoi(m[1]); err != nil {
		return version{}, false
	}
	if v.minor, err = strconv.Atoi(m[2]); err != nil {
		return version{}, false
	}
	if m[3] != "" {
		if v.patch, err = strconv.Atoi(m[3]); err != nil {
			return version{}, false
		}
	}
	return v, true
}

func (v version) less(o version) bool {
	if v.major != o.major {
		return v.major < o.major
	}
	if v.minor != o.minor {
		return v.minor < o.minor
	}
	return v.patch < o.patch
}

// versionInText finds the version numbers (1.3 or 1.3.0) a description names, such as the version
// a deprecated alias stops being accepted in.
var versionInText = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\b\d+\.\d+(?:\.\d+)?\b`) })
