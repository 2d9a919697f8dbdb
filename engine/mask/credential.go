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
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == name
	}
	if !strings.HasPrefix(name, parts[0]) {
		return false
	}
	rest := name[len(parts[0]):]
	for _, part := range parts[1 : len(parts)-1] {
		i := strings.Index(rest, part)
		if i < 0 {
			return false
		}
		rest = rest[i+len(part):]
	}
	return strings.HasSuffix(rest, parts[len(parts)-1])
}
