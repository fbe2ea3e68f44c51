// Package secrets finds keys, tokens and passwords in a transcript's text
// and masks them, so that none leaves xdev as it was written: not in a
// page, an export, an MCP result or a team's database.
//
// # Rules
//
// The rules are gitleaks' default configuration, as gitleaks' own library
// reads it (gitleaks.json.gz, written by genrules from the version go.mod
// pins: 213 rules that look at content), and four of xdev's own in the
// same form (extra.go): a password of any characters in a quoted
// assignment, an Authorization header, a bearer token, a URL's password.
// A rule is a regular expression, the group that is the secret, an entropy
// floor, keywords, and allowlists of placeholders and stop words; a
// secret counts when a keyword is there, the expression matches, the
// secret's Shannon entropy is above the floor, and no allowlist (the
// set's, then the rule's) lets it go: gitleaks' order and tests.
//
// gitleaks' detector is not linked: it brings 12.8 MB of archive readers,
// a TOML and YAML stack and a logger into every command, and it compiles
// every rule (32–69 ms) before the first text and reads each text with
// every rule whose keyword it holds anywhere. A transcript holds "key",
// "token" and "api" on most lines, so that is every rule over every byte.
//
// # The engine
//
// Detector.Find makes one pass over the text with tables of every
// rule's keywords (keywords.go), and asks a rule's expression only about
// the text around each keyword it finds: as far as a match of that
// expression may reach when that is bounded (its width, from the parsed
// expression), or the keyword's line. Three shapes cost less again:
//
//   - anchored rules, whose every match begins with a keyword (ghp_,
//     AKIA, ey… of a JWT), are matched only from where the keyword is;
//   - the "name = value" rules of gitleaks' generator (generic-api-key
//     and 94 others) are asked only where an operator follows the name
//     within its reach and a value as long as the rule's shortest secret
//     follows the operator, and without their lazy 50-character prefix,
//     which made Go's regexp carry 50 threads through every byte;
//   - each rule's expression is compiled the first time a text holds one
//     of its keywords, and Default reads the rule set itself only then:
//     until a text holds a keyword it has the keywords' tables alone,
//     made from defaultkeywords.go (the rule set's keywords, which
//     TestDefaultKeywords checks and writes anew).
//
// Each of these only leaves out text where no match of the expression can
// be, so Find finds what gitleaks finds; where a bound cuts a line, it may
// find more. TestEveryRuleAgainstGitleaks and TestPlantedAmongText hold
// it to gitleaks' own detector on secrets made from every rule by the
// generator gitleaks makes its examples with, and TestMasksTheRealFixtures
// on every real fixture: gitleaks finds nothing in what Mask leaves.
//
// # Masking
//
// Detector.Mask replaces each secret by [REDACTED kind …fp]: the rule's id
// and four hex digits of the secret's SHA-256, so that two mentions of one
// key are seen to be one key while nothing of the key is shown.
// Overlapping findings are one span, named by the most specific rule; a
// secret found once is masked wherever else it is in the same text.
package secrets
