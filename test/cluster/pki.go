package cluster

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki is the cluster's certificate authority and every certificate the
// components need, written as PEM files under dir.
type pki struct {
	dir    string
	caCert *x509.Certificate
	caKey  crypto.Signer
}

// cert describes one leaf certificate. A certificate with SANs is also a
// server certificate.
type cert struct {
	name, cn string
	orgs     []string
	dns      []string
	ips      []net.IP
}

func (p *pki) path(name string) string { return filepath.Join(p.dir, name) }

func newPKI(dir, nodeName string, nodeIP, serviceIP net.IP) (*pki, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	p := &pki{dir: dir}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "kafka-replay-e2e-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(7 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, err
	}
	if p.caCert, err = x509.ParseCertificate(der); err != nil {
		return nil, err
	}
	p.caKey = key
	if err := p.write("ca", der, key); err != nil {
		return nil, err
	}

	// The service-account signing key: RSA, the apiserver's default and
	// most widely accepted token algorithm.
	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	saPriv, err := x509.MarshalPKCS8PrivateKey(saKey)
	if err != nil {
		return nil, err
	}
	saPub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, err
	}
	if err := writePEM(p.path("sa.key"), "PRIVATE KEY", saPriv); err != nil {
		return nil, err
	}
	if err := writePEM(p.path("sa.pub"), "PUBLIC KEY", saPub); err != nil {
		return nil, err
	}

	loop := net.ParseIP("127.0.0.1")
	certs := []cert{
		{name: "apiserver", cn: "kube-apiserver",
			dns: []string{"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local", "localhost"},
			ips: []net.IP{loop, nodeIP, serviceIP}},
		{name: "apiserver-kubelet-client", cn: "kube-apiserver-kubelet-client", orgs: []string{"system:masters"}},
		{name: "admin", cn: "kafka-replay-e2e-admin", orgs: []string{"system:masters"}},
		{name: "kube-controller-manager", cn: "system:kube-controller-manager"},
		{name: "kube-scheduler", cn: "system:kube-scheduler"},
		{name: "kube-proxy", cn: "system:kube-proxy"},
		{name: "kubelet-client", cn: "system:node:" + nodeName, orgs: []string{"system:nodes"}},
		{name: "kubelet-serving", cn: nodeName, dns: []string{nodeName, "localhost"}, ips: []net.IP{loop, nodeIP}},
	}
	for _, c := range certs {
		if err := p.issue(c); err != nil {
			return nil, fmt.Errorf("certificate %s: %w", c.name, err)
		}
	}
	return p, nil
}

func (p *pki) issue(c cert) error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: c.cn, Organization: c.orgs},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(7 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		DNSNames:     c.dns,
		IPAddresses:  c.ips,
	}
	if len(c.dns)+len(c.ips) > 0 {
		tmpl.ExtKeyUsage = append(tmpl.ExtKeyUsage, x509.ExtKeyUsageServerAuth)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.caCert, key.Public(), p.caKey)
	if err != nil {
		return err
	}
	return p.write(c.name, der, key)
}

func (p *pki) write(name string, der []byte, key *ecdsa.PrivateKey) error {
	kb, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return err
	}
	if err := writePEM(p.path(name+".crt"), "CERTIFICATE", der); err != nil {
		return err
	}
	return writePEM(p.path(name+".key"), "PRIVATE KEY", kb)
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	return n
}
