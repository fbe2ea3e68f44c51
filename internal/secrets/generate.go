package secrets

//go:generate go run ./genrules -out gitleaks.json.gz
