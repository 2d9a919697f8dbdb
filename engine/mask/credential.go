package mask

import "strings"

// credentialPatterns are the names (a * matches any run of characters; case aside) of the
// environment variables that hold credentials: no task sees one it did not name, and a value a
// task keys on under such a name is stored as a secret's is (hashed, never in clear). `*_AUTH` and
// `*_AUTH_*` rather than `*_AUTH*`, so that git's GIT_AUTHOR_NAME and GIT_AUTHOR_EMAIL are not
// among them.
var credentialPatterns = []string{"*TOKEN*", "*SECRET*", "*PASSWORD*", "*PASSWD*", "*_AUTH", "*_AUTH_*", "npm_config__auth*"}

// IsCredentialName reports whether a variable name (or a pattern as written) reads as a
// credential: it matches one of credentialPatterns, case aside.
func IsCredentialName(name string) bool {
	upper := strings.ToUpper(name)
	for _, p := range credentialPatterns {
		if MatchStars(strings.ToUpper(p), upper) {
			return true
		}
	}
	return false
}

// MatchStars matches name against pattern, where * matches any run of characters: the one
// wildcard of env names (passThroughEnv, the credential patterns).
func MatchStars(pattern, name string) bool {
	first, rest, starred := strings.Cut(pattern, "*")
	if !starred {
		return pattern == name
	}
	if !strings.HasPrefix(name, first) {
		return false
	}
	name = name[len(first):]
	for {
		part, more, starred := strings.Cut(rest, "*")
		if !starred {
			return strings.HasSuffix(name, part)
		}
		i := strings.Index(name, part)
		if i < 0 {
			return false
		}
		name, rest = name[i+len(part):], more
	}
}
