package mcpclient

import "testing"

// TestReadEnvInstance: the session's name is PALAVER_INSTANCE, or else
// CROWDEDSEA_INSTANCE, for scripts written against the default profile's
// seed.
func TestReadEnvInstance(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"PALAVER_INSTANCE": "desk", "CROWDEDSEA_INSTANCE": "laptop"}, "desk"},
		{map[string]string{"CROWDEDSEA_INSTANCE": " laptop "}, "laptop"},
		{map[string]string{}, ""},
	} {
		tc.env["PALAVER_TOKEN"] = "plv_x"
		e, err := ReadEnv(func(k string) string { return tc.env[k] })
		if err != nil || e.Instance != tc.want {
			t.Errorf("%v: instance %q (%v), want %q", tc.env, e.Instance, err, tc.want)
		}
	}
}
