package oauth

// OAuthCode is oauthCode, for the table test of every kind.
var OAuthCode = oauthCode
