//! Where a request may come from: the one policy against cross-site writes and DNS rebinding.
//!
//! A browser lets any page send requests to any address, the user's own `127.0.0.1` included;
//! what it does not let a page do is lie about where it is (`Origin`), pick the name the
//! request was addressed to (`Host`, which after DNS rebinding is the attacker's name), or send
//! a JSON body to another site without asking it first (a CORS preflight, which haico never
//! grants). So, for every route, REST and MCP alike:
//!
//! - **Host**: the name the request was sent to must be this server's: an IP address (the
//!   bound one, or any address the machine has when bound to all of them), `localhost` (and
//!   `*.localhost`, which browsers keep on the loopback), or one of [`HAICO_PUBLIC_HOSTS`]. A
//!   rebinding page's requests carry its own name and are refused. Ports are not compared: a
//!   rebinding attack is about names, and an `ssh -L` tunnel or a container's port mapping
//!   reaches the server on another port than it is bound to.
//! - **Origin**: absent (curl, MCP clients, same-origin page loads) is fine; present, it must
//!   be this server itself (the same authority as the request's Host, or a public host) or one
//!   of [`HAICO_ALLOWED_ORIGINS`]. Anything else, `null` included, is `403`. A write signed in
//!   by the session cookie must also *carry* one of those (see [`OriginCheck::vouches`]).
//! - **Body type**: a write that carries a body must declare a JSON type (`application/json`,
//!   `application/*+json`, or the JSON Lines types of an imported recording): a page on
//!   another site can send `text/plain`, forms and multipart without asking, and those are
//!   exactly the types refused here (`415`).
//!
//! Behind a reverse proxy that rewrites `Host`, list the public name in
//! [`HAICO_PUBLIC_HOSTS`], or set [`HAICO_TRUST_FORWARDED_HOST`] to take the name from the
//! proxy's `X-Forwarded-Host` (only then: a client could write any name there).
//!
//! The cost on the hot path is a few header look-ups and string comparisons, no allocation for
//! a request that passes.
//!
//! [`HAICO_PUBLIC_HOSTS`]: OriginPolicy::new
//! [`HAICO_ALLOWED_ORIGINS`]: OriginPolicy::new
//! [`HAICO_TRUST_FORWARDED_HOST`]: OriginPolicy::new

use std::net::IpAddr;

use axum::http::{HeaderMap, Method, header, request::Parts};

use crate::http::error::ApiError;

/// The header a trusted reverse proxy names the public host in.
const FORWARDED_HOST: &str = "x-forwarded-host";

/// A name this server answers to, as configured: a host, and a port when one was given.
#[derive(Debug, Clone, PartialEq, Eq)]
struct PublicHost {
    /// Lower case, IPv6 addresses without brackets.
    host: String,
    port: Option<u16>,
}

impl PublicHost {
    fn matches(&self, host: &str, port: Option<u16>) -> bool {
        self.host.eq_ignore_ascii_case(host) && self.port.is_none_or(|want| port == Some(want))
    }
}

/// Which requests may come from where (see the module docs). The default is one person on
/// their own machine: IP addresses and `localhost`, no other site.
#[derive(Debug, Clone, Default)]
pub struct OriginPolicy {
    public_hosts: Vec<PublicHost>,
    /// Normalized `scheme://host[:port]` (no default port).
    allowed_origins: Vec<String>,
    trust_forwarded_host: bool,
}

/// A setting of the policy that cannot be used; the text names the setting and the value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidOriginPolicy {
    /// An entry of `HAICO_PUBLIC_HOSTS` is not a host name with an optional port.
    #[error(
        "HAICO_PUBLIC_HOSTS: `{0}` is not a host name (write `haico.example.org` or \
         `haico.example.org:8443`, without a scheme or a path)"
    )]
    PublicHost(String),
    /// An entry of `HAICO_ALLOWED_ORIGINS` is not an origin.
    #[error(
        "HAICO_ALLOWED_ORIGINS: `{0}` is not an origin (write it as a browser sends it: \
         `https://app.example.org` or `http://localhost:5173`, without a path)"
    )]
    AllowedOrigin(String),
}

impl OriginPolicy {
    /// The policy of these settings: `public_hosts` (`HAICO_PUBLIC_HOSTS`, the names the
    /// server is reached by besides IP addresses and `localhost`), `allowed_origins`
    /// (`HAICO_ALLOWED_ORIGINS`, other sites whose pages may use the API), and
    /// `trust_forwarded_host` (`HAICO_TRUST_FORWARDED_HOST`: a proxy in front sets
    /// `X-Forwarded-Host`).
    pub fn new(
        public_hosts: &[String],
        allowed_origins: &[String],
        trust_forwarded_host: bool,
    ) -> Result<Self, InvalidOriginPolicy> {
        let public_hosts = public_hosts
            .iter()
            .map(|raw| raw.trim())
            .filter(|raw| !raw.is_empty())
            .map(|raw| {
                split_authority(raw)
                    .filter(|_| !raw.contains(['/', '@', '?', '#']))
                    .map(|(host, port)| PublicHost {
                        host: host.to_ascii_lowercase(),
                        port,
                    })
                    .ok_or_else(|| InvalidOriginPolicy::PublicHost(raw.to_string()))
            })
            .collect::<Result<_, _>>()?;
        let allowed_origins = allowed_origins
            .iter()
            .map(|raw| raw.trim())
            .filter(|raw| !raw.is_empty())
            .map(|raw| {
                normalize_origin(raw.strip_suffix('/').unwrap_or(raw))
                    .ok_or_else(|| InvalidOriginPolicy::AllowedOrigin(raw.to_string()))
            })
            .collect::<Result<_, _>>()?;
        Ok(Self {
            public_hosts,
            allowed_origins,
            trust_forwarded_host,
        })
    }

    /// Checks the request's Host, Origin and body type; what its Origin showed, or the
    /// refusal.
    pub(in crate::http) fn check(&self, request: &Parts) -> Result<OriginCheck, ApiError> {
        let authority = self.authority(request);
        if let Some(authority) = authority {
            self.check_host(authority)?;
        }
        let origin = self.check_origin(&request.headers, authority)?;
        check_body_type(&request.method, &request.headers)?;
        Ok(origin)
    }

    /// The authority the client addressed: the trusted proxy's `X-Forwarded-Host`, else
    /// `Host`, else the URI's (HTTP/2).
    fn authority<'a>(&self, request: &'a Parts) -> Option<&'a str> {
        let header = |name| {
            request
                .headers
                .get(name)
                .and_then(|value| value.to_str().ok())
        };
        let forwarded = self
            .trust_forwarded_host
            .then(|| header(FORWARDED_HOST))
            .flatten()
            .and_then(|value| value.split(',').next())
            .map(str::trim)
            .filter(|value| !value.is_empty());
        forwarded
            .or_else(|| header(header::HOST.as_str()))
            .or_else(|| request.uri.authority().map(|authority| authority.as_str()))
    }

    fn check_host(&self, authority: &str) -> Result<(), ApiError> {
        let known = split_authority(authority).is_some_and(|(host, port)| {
            host.parse::<IpAddr>().is_ok()
                || is_localhost(host)
                || self.public_hosts.iter().any(|p| p.matches(host, port))
        });
        if known {
            return Ok(());
        }
        tracing::warn!(
            host = authority,
            "refused a request addressed to a name this server does not answer to"
        );
        Err(ApiError::Forbidden(format!(
            "this server does not answer to the name `{authority}` (the request's Host): if \
             that is how people reach it, add the name to HAICO_PUBLIC_HOSTS (--public-hosts); \
             behind a proxy that sends X-Forwarded-Host, set HAICO_TRUST_FORWARDED_HOST=true. \
             Other names are refused so that a web page cannot reach this server by DNS \
             rebinding"
        )))
    }

    fn check_origin(
        &self,
        headers: &HeaderMap,
        authority: Option<&str>,
    ) -> Result<OriginCheck, ApiError> {
        let Some(origin) = headers.get(header::ORIGIN) else {
            return Ok(OriginCheck::Absent);
        };
        let origin = origin.to_str().unwrap_or("");
        if self.is_own(origin, authority) {
            return Ok(OriginCheck::Own);
        }
        if let Some(normalized) = normalize_origin(origin)
            && self.allowed_origins.contains(&normalized)
        {
            return Ok(OriginCheck::Allowed);
        }
        tracing::warn!(origin, "refused a request from another site's page");
        Err(ApiError::Forbidden(format!(
            "requests from another site's page are refused: the Origin `{origin}` is neither \
             this server nor listed in HAICO_ALLOWED_ORIGINS (--allowed-origins); add it there \
             if pages from that site may use this server"
        )))
    }

    /// Whether `origin` is this server: the same authority the request was sent to, or a
    /// public host.
    fn is_own(&self, origin: &str, authority: Option<&str>) -> bool {
        let Some((scheme, rest)) = origin.split_once("://") else {
            return false;
        };
        if !(scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https")) {
            return false;
        }
        if authority.is_some_and(|authority| authority.eq_ignore_ascii_case(rest)) {
            return true;
        }
        split_authority(rest).is_some_and(|(host, port)| {
            self.public_hosts
                .iter()
                .any(|public| public.matches(host, port))
        })
    }
}

/// What the request's `Origin` showed, for the rules that need more than "not foreign".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::http) enum OriginCheck {
    /// No `Origin`: not a browser's cross-site request (browsers send one with every write).
    Absent,
    /// This server's own page.
    Own,
    /// A site listed in `HAICO_ALLOWED_ORIGINS`.
    Allowed,
}

impl OriginCheck {
    /// Whether the request proves it comes from a page allowed to use the server: what a
    /// write signed in by the session cookie (which the browser adds by itself) needs.
    pub(in crate::http) fn vouches(self) -> bool {
        self != OriginCheck::Absent
    }
}

/// Methods that change nothing.
pub(in crate::http) fn is_safe(method: &Method) -> bool {
    matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// A write with a body must declare a JSON type; see the module docs.
fn check_body_type(method: &Method, headers: &HeaderMap) -> Result<(), ApiError> {
    if is_safe(method) || !has_body(headers) {
        return Ok(());
    }
    let declared = headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .map(|value| value.split(';').next().unwrap_or("").trim());
    if declared.is_some_and(is_json_type) {
        return Ok(());
    }
    Err(ApiError::UnsupportedMediaType(
        "send a JSON body with `Content-Type: application/json`".to_string(),
    ))
}

/// Whether the request says it carries a body.
fn has_body(headers: &HeaderMap) -> bool {
    headers.contains_key(header::TRANSFER_ENCODING)
        || headers
            .get(header::CONTENT_LENGTH)
            .and_then(|value| value.to_str().ok())
            .is_some_and(|length| length.trim() != "0")
}

/// JSON and the JSON Lines types (a recording for `POST /api/threads/import`).
fn is_json_type(mime: &str) -> bool {
    let Some((kind, subtype)) = mime.split_once('/') else {
        return false;
    };
    if !kind.eq_ignore_ascii_case("application") {
        return false;
    }
    let subtype = subtype.to_ascii_lowercase();
    subtype == "json"
        || subtype.ends_with("+json")
        || matches!(subtype.as_str(), "x-ndjson" | "jsonl" | "json-lines")
}

/// Names every browser resolves to the loopback itself (RFC 6761), so no rebinding can use.
fn is_localhost(host: &str) -> bool {
    host.eq_ignore_ascii_case("localhost")
        || host
            .len()
            .checked_sub(".localhost".len())
            .and_then(|at| host.get(at..))
            .is_some_and(|tail| tail.eq_ignore_ascii_case(".localhost"))
}

/// `host[:port]` split into the host (IPv6 without brackets) and the port; `None` when it is
/// not an authority.
fn split_authority(authority: &str) -> Option<(&str, Option<u16>)> {
    let (host, port) = if let Some(rest) = authority.strip_prefix('[') {
        let (host, after) = rest.split_once(']')?;
        match after {
            "" => (host, None),
            _ => (host, Some(after.strip_prefix(':')?)),
        }
    } else {
        match authority.rsplit_once(':') {
            Some((host, port)) => (host, Some(port)),
            None => (authority, None),
        }
    };
    if host.is_empty() || host.contains(':') && host.parse::<IpAddr>().is_err() {
        return None;
    }
    let port = match port {
        Some(port) => Some(port.parse::<u16>().ok()?),
        None => None,
    };
    Some((host, port))
}

/// `scheme://host[:port]` in lower case without the scheme's default port; `None` when it is
/// not an http(s) origin.
fn normalize_origin(origin: &str) -> Option<String> {
    let (scheme, rest) = origin.split_once("://")?;
    if rest.contains(['/', '?', '#', '@']) {
        return None;
    }
    let scheme = scheme.to_ascii_lowercase();
    let default_port = match scheme.as_str() {
        "http" => 80,
        "https" => 443,
        _ => return None,
    };
    let (host, port) = split_authority(rest)?;
    let host = host.to_ascii_lowercase();
    let host = if host.contains(':') {
        format!("[{host}]")
    } else {
        host
    };
    Some(match port {
        Some(port) if port != default_port => format!("{scheme}://{host}:{port}"),
        _ => format!("{scheme}://{host}"),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;
    use axum::http::Request;

    fn parts(method: &str, pairs: &[(&'static str, &'static str)]) -> Parts {
        let mut builder = Request::builder().method(method).uri("/api/threads");
        for (name, value) in pairs {
            builder = builder.header(*name, *value);
        }
        builder.body(()).map(|r| r.into_parts().0).unwrap()
    }

    fn policy(hosts: &[&str], origins: &[&str], forwarded: bool) -> OriginPolicy {
        let own = |list: &[&str]| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        OriginPolicy::new(&own(hosts), &own(origins), forwarded).unwrap()
    }

    #[test]
    fn hosts_are_addresses_localhost_or_public_names() {
        let local = OriginPolicy::default();
        for host in [
            "127.0.0.1:8080",
            "localhost:8080",
            "LOCALHOST",
            "[::1]:8080",
            "10.0.0.5",
            "app.localhost:1",
        ] {
            assert!(
                local.check(&parts("GET", &[("host", host)])).is_ok(),
                "{host}"
            );
        }
        for host in [
            "evil.example:8080",
            "localhost.evil.example",
            "[::1",
            "a:b:c",
        ] {
            assert!(
                local.check(&parts("GET", &[("host", host)])).is_err(),
                "{host}"
            );
        }
        let public = policy(&["haico.example.org", "Other.Example:8443"], &[], false);
        assert!(
            public
                .check(&parts("GET", &[("host", "HAICO.example.org:9")]))
                .is_ok()
        );
        assert!(
            public
                .check(&parts("GET", &[("host", "other.example:8443")]))
                .is_ok()
        );
        assert!(
            public
                .check(&parts("GET", &[("host", "other.example:8444")]))
                .is_err()
        );
    }

    #[test]
    fn forwarded_host_counts_only_when_trusted() {
        let headers = [
            ("host", "127.0.0.1:8080"),
            ("x-forwarded-host", "haico.example.org"),
            ("origin", "https://haico.example.org"),
        ];
        assert!(
            OriginPolicy::default()
                .check(&parts("POST", &headers))
                .is_err()
        );
        let trusting = policy(&["haico.example.org"], &[], true);
        assert_eq!(
            trusting.check(&parts("POST", &headers)).ok(),
            Some(OriginCheck::Own)
        );
        let rebinding = [
            ("host", "127.0.0.1:8080"),
            ("x-forwarded-host", "evil.example"),
        ];
        assert!(trusting.check(&parts("GET", &rebinding)).is_err());
    }

    #[test]
    fn origins_are_this_server_or_allowed() {
        let policy = policy(
            &[],
            &["https://App.example.org:443/", "http://localhost:5173"],
            false,
        );
        let check = |origin: &'static str| {
            policy
                .check(&parts(
                    "POST",
                    &[("host", "127.0.0.1:8080"), ("origin", origin)],
                ))
                .ok()
        };
        assert_eq!(check("http://127.0.0.1:8080"), Some(OriginCheck::Own));
        assert_eq!(check("https://app.example.org"), Some(OriginCheck::Allowed));
        assert_eq!(check("http://localhost:5173"), Some(OriginCheck::Allowed));
        assert_eq!(check("http://localhost:5174"), None);
        assert_eq!(check("http://evil.example"), None);
        assert_eq!(check("null"), None);
        assert_eq!(check("http://127.0.0.1:9090"), None);
        let none = policy.check(&parts("POST", &[("host", "127.0.0.1:8080")]));
        assert_eq!(none.ok(), Some(OriginCheck::Absent));
    }

    #[test]
    fn bodies_must_be_json() {
        let local = OriginPolicy::default();
        let post = |pairs: &[(&'static str, &'static str)]| local.check(&parts("POST", pairs));
        assert!(post(&[("content-length", "3"), ("content-type", "text/plain")]).is_err());
        assert!(post(&[("content-length", "3")]).is_err());
        assert!(post(&[("transfer-encoding", "chunked")]).is_err());
        assert!(
            post(&[
                ("content-length", "3"),
                ("content-type", "application/json")
            ])
            .is_ok()
        );
        let json = ("content-type", "Application/JSON; charset=utf-8");
        assert!(post(&[("content-length", "3"), json]).is_ok());
        let ndjson = ("content-type", "application/x-ndjson");
        assert!(post(&[("content-length", "3"), ndjson]).is_ok());
        assert!(post(&[("content-length", "0"), ("content-type", "text/plain")]).is_ok());
        assert!(post(&[]).is_ok());
    }

    #[test]
    fn bad_settings_name_themselves() {
        let list = |s: &str| vec![s.to_string()];
        let err = OriginPolicy::new(&list("https://haico.example.org"), &[], false).unwrap_err();
        assert!(err.to_string().starts_with("HAICO_PUBLIC_HOSTS"));
        let err = OriginPolicy::new(&[], &list("haico.example.org"), false).unwrap_err();
        assert!(err.to_string().starts_with("HAICO_ALLOWED_ORIGINS"));
        let err = OriginPolicy::new(&[], &list("https://a.example/path"), false).unwrap_err();
        assert!(err.to_string().starts_with("HAICO_ALLOWED_ORIGINS"));
    }
}
