package secrets

//go:generate go run ./genrules -out gitleaks.json.gz
//go:generate go test -run TestDefaultKeywords -update
