// Command incluster is the smoke test's workload: from inside a pod it
// calls the API server through the kubernetes Service (so it proves the
// CNI bridge, kube-proxy and the service-account token all work), prints
// what it got and writes it as the container's termination message.
package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"
)

func main() {
	msg, err := run()
	if err != nil {
		fmt.Fprintln(os.Stderr, "incluster:", err)
		os.Exit(1)
	}
	fmt.Println(msg)
	_ = os.WriteFile("/dev/termination-log", []byte(msg), 0o644)
}

func run() (string, error) {
	const sa = "/var/run/secrets/kubernetes.io/serviceaccount/"
	tok, err := os.ReadFile(sa + "token")
	if err != nil {
		return "", err
	}
	ca, err := os.ReadFile(sa + "ca.crt")
	if err != nil {
		return "", err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	host := net.JoinHostPort(os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT"))
	req, err := http.NewRequest(http.MethodGet, "https://"+host+"/version", nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+string(tok))
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET /version via %s: %s", host, resp.Status)
	}
	return fmt.Sprintf("in-cluster GET https://%s/version -> %s %s", host, resp.Status, compact(b)), nil
}

func compact(b []byte) string {
	out := make([]byte, 0, len(b))
	for _, c := range b {
		if c != '\n' && c != ' ' {
			out = append(out, c)
		}
	}
	return string(out)
}
