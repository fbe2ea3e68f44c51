package secrets

// extraRules are the shapes a transcript holds that gitleaks' default
// rules leave to its generic rule, which wants ten or more characters of
// [\w.=-] after a name: a password of any characters in an assignment,
// an Authorization header or a bearer token outside a curl command, and
// a URL that carries a password. Each is made as gitleaks' rules are (a
// keyword, a group for the secret, an entropy floor, an allowlist of
// placeholders), so that one engine runs them all.
func extraRules() []*Rule {
	placeholders := &Allowlist{Regexes: []string{
		`(?i)^(?:\*+|x+|\.+|-+|_+|\$\{?\w+\}?|\$\([^)]*\)|%\w+%|<[^>]*>|\{\{[^}]*\}\}|\[[^\]]*\]|` +
			`pass(?:word)?|passwd|pwd|secret|token|changeme|changeit|example|placeholder|redacted|` +
			`your[_-]?\w*|my[_-]?\w*|none|null|nil|undefined|true|false|test|dummy|fake|foo|bar|admin|user(?:name)?)$`,
		// an expression, not a value: a template's ${…} or {{…}}, a shell or env variable
		`\$\{|\{\{|^\$[A-Za-z_(]|^process\.env\.|^os\.environ`,
	},
		// a test's or an example's value: a password that says it is one
		// ("securepassword123", "wrongpassword"), a token that says it is
		// not one ("invalid_token")
		StopWords: []string{"password", "passwd", "invalid", "placeholder", "example", "dummy"}}
	return []*Rule{
		{
			ID: "password-assignment",
			// password = "…", "pwd": '…', PASSWORD='…' (quoted, any characters but quotes and space).
			Regex:       `(?i)(?:passw(?:or)?d|pwd|pass_?phrase|secret)(?:[\w.-]{0,20})["']?\s{0,3}(?::=|=|:|=>)\s{0,3}["'\x60]([^"'\x60\s]{6,128})["'\x60]`,
			SecretGroup: 1,
			Entropy:     2.5,
			Keywords:    []string{"passw", "pwd", "passphrase", "pass_phrase", "secret"},
			Allowlists:  []*Allowlist{placeholders},
		},
		{
			ID:          "authorization-header",
			Regex:       `(?i)\bauthorization["']?\s{0,3}[:=]\s{0,3}["']?(?:bearer|token|basic|bot)\s+([A-Za-z0-9._~+/=-]{12,})`,
			SecretGroup: 1,
			Entropy:     3,
			Keywords:    []string{"authorization"},
			Allowlists:  []*Allowlist{placeholders},
		},
		{
			ID:          "bearer-token",
			Regex:       `(?i)\bbearer\s+([A-Za-z0-9._~+/-]{20,}=*)`,
			SecretGroup: 1,
			Entropy:     3.5,
			Keywords:    []string{"bearer"},
			Allowlists:  []*Allowlist{placeholders},
		},
		{
			ID: "url-password",
			// scheme://user:password@host, from the "://" on
			// (a password may hold an unencoded @: the host follows the last)
			Regex:       `://[^\s:/?#@'"<>]{0,64}:([^\s/?#'"<>]{3,128})@[\w.-]+`,
			SecretGroup: 1,
			Entropy:     1.5,
			Keywords:    []string{"://"},
			Allowlists: []*Allowlist{placeholders,
				// the documentation's hosts (RFC 2606): a URL validator's tests, an example
				{Target: "match", Regexes: []string{`@(?:[\w-]+\.)*example(?:\.(?:com|org|net))?$`}}},
		},
	}
}
