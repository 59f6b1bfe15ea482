//! How often a caller may start an agent turn or try to sign in: plain request rates, per
//! person (or token, or address), answered `429` with `Retry-After` past them.
//!
//! Both use `governor`'s keyed GCRA limiter: a caller may send `burst` requests at once, then
//! one more each `every`. Chat turns are counted per person (a personal token or session),
//! for the administrator's token as one caller, and per address in one-person mode; sign-ins
//! per address (the address [`client_address`] finds, the same the wrong-password slow-down of
//! [`crate::people`] counts). The slow-down stays as it is: it makes each *wrong* password
//! cost more; this limit caps how many attempts, right or wrong, an address sends at all.
//!
//! Kept in this process's memory, like the slow-down: behind N replicas a caller gets N times
//! the rate. Callers not seen for a while are forgotten once the table grows (see
//! [`SWEEP_AT`]), so an attacker spreading over many addresses cannot grow it without bound.

use std::{net::SocketAddr, num::NonZeroU32, time::Duration};

use axum::{
    extract::ConnectInfo,
    http::{HeaderMap, request::Parts},
};
use governor::{
    DefaultKeyedRateLimiter, Quota, RateLimiter,
    clock::{Clock, DefaultClock},
};

use crate::http::error::ApiError;
use haico_core::people::Principal;

/// Default chat turns a caller may start in a minute (and at once).
pub const DEFAULT_CHAT_TURNS_PER_MINUTE: u32 = 30;
/// Default sign-in attempts an address may make in a minute (and at once).
pub const DEFAULT_SIGN_INS_PER_MINUTE: u32 = 20;
/// Default study entries an address may make in a minute (and at once).
pub const DEFAULT_STUDY_ENTRIES_PER_MINUTE: u32 = 30;
/// Tracked callers past which the ones whose allowance has refilled are dropped.
const SWEEP_AT: usize = 10_000;

/// One limit: `burst` requests at once, then one more each `every`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimit {
    /// Requests allowed at once (and the most a quiet caller saves up).
    pub burst: NonZeroU32,
    /// How long until one more request is allowed.
    pub every: Duration,
}

impl RateLimit {
    /// `count` requests a minute, all of them at once if the caller likes; `None` (no limit)
    /// for 0, which is how the settings turn a limit off.
    pub fn per_minute(count: u32) -> Option<Self> {
        let burst = NonZeroU32::new(count)?;
        Some(Self {
            burst,
            every: Duration::from_secs(60) / count,
        })
    }

    fn quota(self) -> Option<Quota> {
        Quota::with_period(self.every).map(|quota| quota.allow_burst(self.burst))
    }
}

/// The limits of a server (`None`: unlimited).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateLimits {
    /// `POST /api/threads/{id}/chat` per caller (`HAICO_CHAT_TURNS_PER_MINUTE`).
    pub chat_turns: Option<RateLimit>,
    /// `POST /api/session` per address (`HAICO_SIGN_INS_PER_MINUTE`).
    pub sign_ins: Option<RateLimit>,
    /// `POST /api/s/{entry_key}/sessions` per address (`HAICO_STUDY_ENTRIES_PER_MINUTE`).
    pub study_entries: Option<RateLimit>,
}

impl Default for RateLimits {
    fn default() -> Self {
        Self {
            chat_turns: RateLimit::per_minute(DEFAULT_CHAT_TURNS_PER_MINUTE),
            sign_ins: RateLimit::per_minute(DEFAULT_SIGN_INS_PER_MINUTE),
            study_entries: RateLimit::per_minute(DEFAULT_STUDY_ENTRIES_PER_MINUTE),
        }
    }
}

/// The running limiters of [`RateLimits`] (by default, none).
#[derive(Debug, Default)]
pub(in crate::http) struct Limiters {
    chat_turns: Option<DefaultKeyedRateLimiter<String>>,
    sign_ins: Option<DefaultKeyedRateLimiter<String>>,
    study_entries: Option<DefaultKeyedRateLimiter<String>>,
    clock: DefaultClock,
}

impl Limiters {
    pub(in crate::http) fn new(limits: RateLimits) -> Self {
        let limiter = |limit: Option<RateLimit>| {
            limit
                .and_then(RateLimit::quota)
                .map(RateLimiter::<String, _, _>::keyed)
        };
        Self {
            chat_turns: limiter(limits.chat_turns),
            sign_ins: limiter(limits.sign_ins),
            study_entries: limiter(limits.study_entries),
            clock: DefaultClock::default(),
        }
    }

    /// Counts a chat turn `principal` starts; the refusal past the limit.
    pub(in crate::http) fn chat_turn(
        &self,
        principal: &Principal,
        request: &Parts,
    ) -> Result<(), ApiError> {
        let Some(limiter) = &self.chat_turns else {
            return Ok(());
        };
        let key = match principal {
            Principal::User(user) => format!("user {}", user.name),
            Principal::AdminToken => "the administrator's token".to_string(),
            Principal::Participant(participant) => {
                format!("participant {}", participant.session_ref)
            }
            Principal::Local | Principal::Anonymous => address(request),
        };
        self.count(limiter, key, "HAICO_CHAT_TURNS_PER_MINUTE", "chat turns")
    }

    /// Counts a sign-in attempt from the request's address; the refusal past the limit.
    pub(in crate::http) fn sign_in(&self, request: &Parts) -> Result<(), ApiError> {
        let Some(limiter) = &self.sign_ins else {
            return Ok(());
        };
        self.count(
            limiter,
            address(request),
            "HAICO_SIGN_INS_PER_MINUTE",
            "sign-in attempts",
        )
    }

    /// Counts a participant entering a study from the request's address.
    pub(in crate::http) fn study_entry(&self, request: &Parts) -> Result<(), ApiError> {
        let Some(limiter) = &self.study_entries else {
            return Ok(());
        };
        self.count(
            limiter,
            address(request),
            "HAICO_STUDY_ENTRIES_PER_MINUTE",
            "study entries",
        )
    }

    fn count(
        &self,
        limiter: &DefaultKeyedRateLimiter<String>,
        key: String,
        setting: &str,
        what: &str,
    ) -> Result<(), ApiError> {
        if limiter.len() >= SWEEP_AT {
            limiter.retain_recent();
            limiter.shrink_to_fit();
        }
        let Err(not_until) = limiter.check_key(&key) else {
            return Ok(());
        };
        let wait = not_until.wait_time_from(self.clock.now());
        // Whole seconds, rounded up: a client that waits `Retry-After` is let in.
        let retry_after = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
        let retry_after = retry_after.max(1);
        tracing::warn!(caller = key, what, retry_after, "rate limit reached");
        Err(ApiError::TooManyRequests {
            message: format!(
                "too many {what}: try again in {retry_after} s (the server's limit is \
                 {setting})"
            ),
            retry_after,
        })
    }
}

/// The address a request is counted under.
fn address(request: &Parts) -> String {
    let peer = request
        .extensions
        .get::<ConnectInfo<SocketAddr>>()
        .map(|info| info.0);
    client_address(&request.headers, peer)
}

/// The address sign-in attempts are counted under: the peer's, or, when the peer is a proxy
/// on this machine or a private network, the first `X-Forwarded-For` hop it reports (a
/// client elsewhere could write any address there, so its header is not believed).
pub(in crate::http) fn client_address(
    headers: &HeaderMap,
    peer: Option<std::net::SocketAddr>,
) -> String {
    let peer = peer.map(|peer| peer.ip());
    let trusted_proxy = peer.is_some_and(|ip| match ip {
        std::net::IpAddr::V4(v4) => v4.is_loopback() || v4.is_private(),
        std::net::IpAddr::V6(v6) => v6.is_loopback() || v6.is_unique_local(),
    });
    let forwarded = headers
        .get("x-forwarded-for")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(',').next())
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty());
    match (trusted_proxy, forwarded, peer) {
        (true, Some(forwarded), _) => forwarded,
        (_, _, Some(peer)) => peer.to_string(),
        _ => "unknown".to_string(),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::panic)]
mod tests {
    use super::*;

    #[test]
    fn per_minute_spreads_the_minute_and_zero_is_unlimited() {
        let limit = RateLimit::per_minute(30).unwrap();
        assert_eq!(limit.burst.get(), 30);
        assert_eq!(limit.every, Duration::from_secs(2));
        assert_eq!(RateLimit::per_minute(0), None);
    }

    #[test]
    fn past_the_burst_the_answer_says_when() {
        let limiters = Limiters::new(RateLimits {
            study_entries: None,
            chat_turns: None,
            sign_ins: Some(RateLimit {
                burst: NonZeroU32::new(2).unwrap(),
                every: Duration::from_secs(30),
            }),
        });
        let request = axum::http::Request::new(()).into_parts().0;
        assert!(limiters.sign_in(&request).is_ok());
        assert!(limiters.sign_in(&request).is_ok());
        let Err(ApiError::TooManyRequests { retry_after, .. }) = limiters.sign_in(&request) else {
            panic!("the third attempt is refused");
        };
        assert!((1..=30).contains(&retry_after), "{retry_after}");
        assert!(
            limiters.chat_turn(&Principal::Local, &request).is_ok(),
            "no chat limit"
        );
    }
}
