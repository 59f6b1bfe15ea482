//! One turn's loop: ask the model (streaming its text out as tokens), run the calls it asks
//! for, and go round again until it answers in plain text, makes no progress, or reaches the
//! step limit.

use std::time::{Duration, Instant};

use futures::StreamExt;
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::agent::{
    checklist::{self, Checklist},
    history::{load_history, load_history_with_calls},
    model::{ChatMessage, ModelEvent, ModelRequest, ToolCallRequest, ToolChoice, ToolDefinition},
    progress::{FAILED_ROUNDS_LIMIT, TurnCalls},
    prompt::instructions_for,
    reply,
    second_ask::{self, SecondAsk},
    text_calls::{self, TextToolCalls},
};
use crate::{
    tools::Envelope, tools::FailureKind, tools::InTurn, tools::ToolRuntime, tools::Toolset,
    tools::build_tools,
};
use haico_store::{ThreadId, usage::CallUsage, usage::TurnUsage};

use super::{external::ExternalTools, spans, *};

impl Agent {
    /// The loop itself.
    pub(super) async fn think(
        &self,
        runtime: &ToolRuntime,
        thread_id: &ThreadId,
        turn_index: i64,
        message: String,
        cancel: &CancellationToken,
        kept: &mut Kept,
    ) -> Outcome {
        let Kept { prompt, usage } = kept;
        let policy = match self.policies.get() {
            Some(policies) => match policies.policy(thread_id).await {
                Ok(policy) => policy,
                Err(err) => {
                    return Outcome::Failed(format!("could not read the turn's policy: {err}"));
                }
            },
            None => None,
        };
        let all_tools = build_tools(thread_id);
        let tools = match &policy {
            Some(policy) => Toolset::new(
                thread_id.clone(),
                all_tools
                    .iter()
                    .filter(|tool| policy.allows(tool.name()))
                    .cloned()
                    .collect::<Vec<_>>(),
            ),
            None => all_tools,
        };
        let allowed = |name: &str| policy.as_ref().is_none_or(|p| p.allows(name));
        let max_tool_calls = policy
            .as_ref()
            .and_then(|p| p.max_tool_calls)
            .unwrap_or(self.config.max_tool_calls);
        let mut sampling = self.config.sampling.clone();
        if let Some(temperature) = policy.as_ref().and_then(|p| p.temperature) {
            sampling.temperature = Some(temperature);
        }
        // Other MCP servers' tools (of the servers the thread chose) come after the
        // workspace's, in name order: the list is the same in every request until a server's
        // tools change (the prompt's stable head).
        let chosen = match runtime.workspaces().threads().get(thread_id).await {
            Ok(thread) => thread.mcp_servers,
            Err(err) => return Outcome::Failed(format!("could not read the thread: {err}")),
        };
        let external = ExternalTools::now(self.mcp_servers(), chosen);
        let mut aids = self.config.aids;
        let mut definitions: Vec<ToolDefinition> = tools
            .specs()
            .into_iter()
            .map(|spec| ToolDefinition {
                name: spec.name.to_string(),
                description: spec.description.to_string(),
                parameters: spec.parameters.clone(),
            })
            .chain(
                external
                    .definitions()
                    .into_iter()
                    .filter(|definition| allowed(&definition.name)),
            )
            .collect();
        if aids.compact_tools {
            crate::agent::aids::compact(&mut definitions);
        }
        // A turn offered no tool at all (a study's plain-chat condition) answers in text.
        aids.reply_tool &= !definitions.is_empty();
        aids.checklist &= aids.reply_tool;
        if aids.checklist {
            definitions.push(checklist::definition());
        }
        if aids.reply_tool {
            definitions.push(reply::definition());
        }
        let offered: Vec<&str> = tools
            .iter()
            .map(|tool| tool.name())
            .chain(external.names().filter(|name| allowed(name)))
            .chain(aids.checklist.then_some(checklist::NAME))
            .chain(aids.reply_tool.then_some(reply::NAME))
            .collect();
        let workspaces = runtime.workspaces();
        let history = if aids.history_calls {
            load_history_with_calls(workspaces, thread_id, turn_index, self.config.history_chars)
                .await
        } else {
            load_history(workspaces, thread_id, turn_index, self.config.history_chars).await
        };
        let request_text = message.clone();
        let mut messages = match history {
            Ok(history) => history,
            Err(err) => return Outcome::Failed(format!("could not read the conversation: {err}")),
        };
        // The unanswered message of a failed or cancelled last turn joins the new one, so the
        // model knows what "try again" refers to.
        match messages.last_mut() {
            Some(ChatMessage::User { content }) => {
                content.push_str("\n\n");
                content.push_str(&message);
            }
            _ => messages.push(ChatMessage::user(message)),
        }
        let mut calls_made: usize = 0;
        let mut made = TurnCalls::new(aids.reply_tool);
        // Replies that could not be sent (no message): a model that keeps at it ends the turn.
        let mut unsent_replies = 0;
        // What the next request asks beyond the model's own choice (a second ask).
        let mut asking = SecondAsk::None;
        let mut asked_to_act = false;
        // A note of the loop's for the next request only, read after the snapshot: a small
        // model follows the last thing it reads and copies its own earlier calls, so a note
        // buried before the snapshot loses to the call it just repeated (`turn-notes`).
        let mut last_note: Option<String> = None;
        // The changes asked for, named one at a time (`checklist`).
        let mut checklist = aids.checklist.then(Checklist::default);
        loop {
            if cancel.is_cancelled() {
                return Outcome::Cancelled;
            }
            let mut snapshot = match prompt
                .snapshot(workspaces, thread_id, &self.config.budget)
                .await
            {
                Ok(snapshot) => snapshot,
                Err(err) => return Outcome::Failed(format!("could not read the workspace: {err}")),
            };
            if aids.turn_notes {
                snapshot.push_str(&made.notes(&request_text));
            }
            if policy.as_ref().is_some_and(|p| !p.snapshot) {
                snapshot.clear();
            }
            // The list is asked for from the person's message alone (`checklist`).
            if checklist.as_ref().is_some_and(Checklist::awaiting_list) {
                snapshot.clear();
            }
            let notes = last_note
                .take()
                .into_iter()
                // The change to make now is the very last thing the model reads.
                .chain(checklist.as_ref().and_then(Checklist::note));
            for note in notes {
                if !snapshot.is_empty() {
                    snapshot.push_str("\n\n");
                }
                snapshot.push_str(&note);
            }
            // Everything but the snapshot is what the previous request held, plus what this
            // turn added since: a provider's prompt cache keeps all of it.
            let request = ModelRequest {
                system: match policy.as_ref().and_then(|p| p.system_prompt.as_deref()) {
                    Some(system) => system.to_string(),
                    None => instructions_for(aids).to_string(),
                },
                messages: messages.clone(),
                snapshot,
                snapshot_role: self.config.snapshot_role,
                tools: definitions.clone(),
                max_tokens: self.config.max_tokens,
                // With the reply tool every answer is a call, and the server may enforce it.
                tool_choice: if aids.reply_tool {
                    ToolChoice::Required
                } else {
                    asking.tool_choice()
                },
                sampling: sampling.clone(),
            };
            let asked = std::mem::replace(&mut asking, SecondAsk::None);
            let answer = match self.ask(thread_id, &request, cancel, usage).await {
                Ok(answer) => answer,
                Err(outcome) => return outcome,
            };
            let Answer {
                text,
                mut calls,
                held,
            } = answer;
            let written = if calls.is_empty() && self.config.text_tool_calls == TextToolCalls::Auto
            {
                text_calls::parse(&text, &offered, calls_made + 1)
            } else {
                None
            };
            // Asked to answer after repeating a write, the model called tools again: the turn
            // ends here, telling the person what it did, rather than looping to the limit.
            let workspace_calls = calls
                .iter()
                .chain(written.iter().flatten())
                .filter(|call| !reply::is_reply(call) && !checklist::is_list(call))
                .count();
            if asked == SecondAsk::Answer && workspace_calls > 0 {
                return Outcome::Repeating(made.account());
            }
            let as_text = written.is_some();
            match written {
                Some(written) => {
                    tracing::info!(
                        calls = written.len(),
                        "the model wrote its tool calls as text; taking them as calls"
                    );
                    calls = written;
                }
                // Held-back text that is no call after all is shown now.
                None if !held.is_empty() => self.publish_token(thread_id, &held),
                None => {}
            }
            if calls.is_empty() {
                // A change request answered in prose, before any call: ask once more, this
                // time requiring a call (never after a write, never twice).
                if aids.ask_to_act
                    && !asked_to_act
                    && calls_made == 0
                    && second_ask::asks_for_changes(&request_text)
                    && !second_ask::asks_back(&text)
                {
                    asked_to_act = true;
                    asking = SecondAsk::Act;
                    messages.push(ChatMessage::assistant(text, Vec::new()));
                    messages.push(ChatMessage::user(second_ask::ACT_NOTE));
                    continue;
                }
                return Outcome::Answered(text);
            }
            // A call written as text is replayed as a real call, so the model sees in its
            // history the form the API expects.
            let said = if as_text { String::new() } else { text.clone() };
            messages.push(ChatMessage::assistant(said.clone(), calls.clone()));
            let mut all_failed = true;
            let mut any_failed = false;
            let mut repeated_write = false;
            // A repeat of a call that failed or changed nothing.
            let mut repeated_other = false;
            // The reply, if the answer holds one: the workspace calls before it run first.
            let mut replied: Option<ToolCallRequest> = None;
            for call in calls {
                if checklist::is_list(&call) {
                    // The list is the loop's, not the workspace's: answered here, never run.
                    let listed = match checklist.as_mut() {
                        Some(list) => list.take(&call),
                        None => Err(format!("{} is not offered", checklist::NAME)),
                    };
                    let envelope = match listed {
                        Ok(summary) => {
                            all_failed = false;
                            Envelope::ok(summary)
                        }
                        Err(why) => {
                            made.note_failure(&why);
                            Envelope::failure(why)
                        }
                    };
                    messages.push(ChatMessage::tool(
                        call.id,
                        call.name,
                        envelope.to_json_string(),
                    ));
                    continue;
                }
                if reply::is_reply(&call) {
                    if replied.is_none() {
                        replied = Some(call);
                    } else {
                        // Only the first reply counts; every call still gets its result.
                        messages.push(ChatMessage::tool(
                            call.id,
                            call.name,
                            Envelope::failure("only one reply is sent per answer").to_json_string(),
                        ));
                    }
                    continue;
                }
                if calls_made >= max_tool_calls {
                    return Outcome::CallLimit(said);
                }
                if cancel.is_cancelled() {
                    return Outcome::Cancelled;
                }
                calls_made += 1;
                let at = InTurn {
                    turn_index,
                    call_index: i64::try_from(calls_made).unwrap_or(i64::MAX),
                };
                let (record, repeat) = if allowed(&call.name) {
                    Self::run_call(runtime, &tools, &external, &call, at, &mut made, cancel).await
                } else {
                    (Self::refuse_call(runtime, &tools, &call, at).await, false)
                };
                if let Some(list) = checklist.as_mut() {
                    let read_only = tools.get(&call.name).is_some_and(|tool| tool.read_only());
                    let repeated = record.failure == Some(FailureKind::Repeated);
                    list.after_call(checklist::effect(
                        &record.envelope,
                        read_only,
                        repeated,
                        repeat,
                    ));
                }
                repeated_write |= repeat;
                repeated_other |= !repeat && record.failure == Some(FailureKind::Repeated);
                all_failed &= !record.envelope.success;
                any_failed |= !record.envelope.success;
                messages.push(ChatMessage::tool(
                    call.id,
                    call.name,
                    record.envelope.to_json_string(),
                ));
            }
            if let Some(call) = replied {
                let ran_calls = workspace_calls > 0;
                let unsent = match reply::message(&call) {
                    Err(why) => Err(why),
                    Ok(_) if any_failed => Err(reply::AFTER_FAILURE_NOTE.to_string()),
                    // A change request answered with a reply alone, before any call: asked once
                    // more to make the changes (never after a write, never twice).
                    Ok(text)
                        if aids.ask_to_act
                            && !asked_to_act
                            && calls_made == 0
                            && second_ask::asks_for_changes(&request_text)
                            && !second_ask::asks_back(&text) =>
                    {
                        asked_to_act = true;
                        Err(reply::ACT_NOTE.to_string())
                    }
                    Ok(text) => match checklist.as_mut().and_then(Checklist::refuse_reply) {
                        Some(why) => Err(why),
                        None => Ok(text),
                    },
                };
                match unsent {
                    Ok(text) => {
                        self.publish_token(thread_id, &text);
                        return Outcome::Answered(text);
                    }
                    Err(why) => {
                        messages.push(ChatMessage::tool(
                            call.id,
                            call.name,
                            Envelope::failure(why.clone()).to_json_string(),
                        ));
                        unsent_replies += 1;
                        if unsent_replies >= FAILED_ROUNDS_LIMIT {
                            return Outcome::NoProgress(why);
                        }
                        if !ran_calls {
                            continue;
                        }
                    }
                }
            }
            // At the limit the turn ends here, without asking the model once more.
            if calls_made >= max_tool_calls {
                return Outcome::CallLimit(said);
            }
            // With the list, the note names the next change (a repeated write closed the one it
            // repeated), so a repeat needs no note of its own.
            if repeated_write && !checklist.as_ref().is_some_and(Checklist::active) {
                // The model lost track: ask it to answer the person now, in text.
                asking = SecondAsk::Answer;
                let note = if aids.reply_tool {
                    second_ask::REPLY_NOTE
                } else {
                    second_ask::ANSWER_NOTE
                };
                if aids.turn_notes {
                    last_note = Some(note.to_string());
                } else {
                    messages.push(ChatMessage::user(note));
                }
                continue;
            }
            if repeated_other && aids.turn_notes {
                last_note = made
                    .last_error()
                    .map(|repeated| second_ask::repeat_note(repeated, aids.reply_tool));
            }
            if made.round_ended(all_failed) {
                return Outcome::NoProgress(made.last_error().unwrap_or_default().to_string());
            }
        }
    }

    /// One model call: streams its text to the thread's subscribers (holding back what may be
    /// a tool call written as text: [`Answer::held`]) and gathers its calls, timing it and
    /// counting its tokens into `usage`.
    async fn ask(
        &self,
        thread_id: &ThreadId,
        request: &ModelRequest,
        cancel: &CancellationToken,
        usage: &mut TurnUsage,
    ) -> Result<Answer, Outcome> {
        let span = spans::model_call(self.model.as_ref(), request);
        let calls_before = usage.calls.len();
        let answer = self
            .ask_within(thread_id, request, cancel, usage)
            .instrument(span.clone())
            .await;
        if crate::telemetry::enabled() {
            let this_call = usage.calls.get(calls_before);
            spans::record_model_call(&span, this_call, &answer);
        }
        answer
    }

    async fn ask_within(
        &self,
        thread_id: &ThreadId,
        request: &ModelRequest,
        cancel: &CancellationToken,
        usage: &mut TurnUsage,
    ) -> Result<Answer, Outcome> {
        let started = Instant::now();
        let mut call = CallUsage::default();
        let stream = tokio::select! {
            result = self.model.stream(request) => result,
            () = cancel.cancelled() => return Err(Outcome::Cancelled),
        };
        let mut stream = match stream {
            Ok(stream) => stream,
            Err(err) => return Err(Outcome::Failed(err.to_string())),
        };
        let mut text = String::new();
        let mut calls = Vec::new();
        // Text not yet shown: an answer that begins like a written tool call is held back
        // until it is clear whether it is one.
        let mut held = String::new();
        let mut holding = self.config.text_tool_calls == TextToolCalls::Auto;
        let finished = loop {
            let item = tokio::select! {
                item = stream.next() => item,
                () = cancel.cancelled() => break Err(Outcome::Cancelled),
            };
            if call.first_token_ms.is_none()
                && matches!(
                    item,
                    Some(Ok(ModelEvent::TextDelta(_) | ModelEvent::ToolCall(_)))
                )
            {
                call.first_token_ms = Some(millis(started.elapsed()));
            }
            match item {
                None => break Ok(()),
                Some(Ok(ModelEvent::TextDelta(delta))) => {
                    if delta.is_empty() {
                        continue;
                    }
                    text.push_str(&delta);
                    if holding {
                        held.push_str(&delta);
                        if !text_calls::may_be_call(&text) {
                            holding = false;
                            self.publish_token(thread_id, &std::mem::take(&mut held));
                        }
                    } else {
                        self.publish_token(thread_id, &delta);
                    }
                }
                Some(Ok(ModelEvent::ToolCall(request))) => calls.push(request),
                Some(Ok(ModelEvent::Usage(reported))) => call.fill_from(&reported),
                Some(Ok(ModelEvent::Finished { stop_reason })) => {
                    if let Some(reason) = stop_reason
                        && crate::telemetry::enabled()
                    {
                        tracing::Span::current().record("gen_ai.response.finish_reasons", reason);
                    }
                }
                Some(Err(err)) => break Err(Outcome::Failed(err.to_string())),
            }
        };
        let elapsed = started.elapsed();
        call.first_token_ms = call.first_token_ms.or(Some(millis(elapsed)));
        call.duration_ms = Some(millis(elapsed));
        crate::metrics::model_usage(
            call.prompt_tokens,
            call.cached_tokens,
            call.completion_tokens,
            call.first_token_ms.map(Duration::from_millis),
        );
        usage.add(call);
        finished?;
        Ok(Answer { text, calls, held })
    }

    /// Records a call of a tool the thread's policy leaves out, failed as a call of a tool
    /// that does not exist (the model is not told that it exists elsewhere).
    async fn refuse_call(
        runtime: &ToolRuntime,
        tools: &Toolset,
        call: &ToolCallRequest,
        at: InTurn,
    ) -> crate::tools::ToolCall {
        let args = serde_json::from_str::<Value>(&call.arguments)
            .unwrap_or_else(|_| Value::String(call.arguments.chars().take(2_000).collect()));
        runtime
            .reject_in_turn(
                tools,
                &call.name,
                args,
                (
                    FailureKind::UnknownTool,
                    format!(
                        "no tool named `{}`; use the tools you are offered",
                        call.name
                    ),
                ),
                at,
            )
            .await
    }

    /// Runs one requested call; arguments that are not a JSON object, and a call identical to
    /// one already made in the turn, become failed steps. Also says whether the call repeated
    /// a write that was done.
    async fn run_call(
        runtime: &ToolRuntime,
        tools: &Toolset,
        external: &ExternalTools,
        call: &ToolCallRequest,
        at: InTurn,
        made: &mut TurnCalls,
        cancel: &CancellationToken,
    ) -> (crate::tools::ToolCall, bool) {
        // A model's made-up name or text may hold anything, NUL characters included: the
        // workspace scrubs them from what it records (`Edit::record_tool_call`).
        let name = call.name.as_str();
        let raw = call.arguments.as_str();
        let parsed = if raw.trim().is_empty() {
            Ok(Value::Object(serde_json::Map::new()))
        } else {
            serde_json::from_str::<Value>(raw)
        };
        let args = match parsed {
            Ok(args) => args,
            Err(err) => {
                let shown: String = raw.chars().take(2_000).collect();
                let record = runtime
                    .reject_in_turn(
                        tools,
                        name,
                        Value::String(shown),
                        (
                            FailureKind::InvalidArguments,
                            format!(
                                "the arguments are not valid JSON ({err}); send one JSON object \
                                 that matches the tool's schema"
                            ),
                        ),
                        at,
                    )
                    .await;
                return (record, false);
            }
        };
        if tools.get(name).is_none() && external.handles(name) {
            return match made.repeat(name, &args) {
                Some(repeat) => {
                    made.note_repeat(&repeat);
                    let record = runtime
                        .reject_in_turn(
                            tools,
                            name,
                            args,
                            (FailureKind::Repeated, repeat.answer),
                            at,
                        )
                        .await;
                    (record, repeat.of_done_write)
                }
                None => {
                    let record = external
                        .call(runtime, tools.thread_id(), name, args.clone(), at, cancel)
                        .await;
                    // Only a call that worked is not made again: a timeout or a restarting
                    // server may well answer the same call next time.
                    if record.envelope.success {
                        made.record(name, &args, false, at.call_index, &record.envelope);
                    }
                    (record, false)
                }
            };
        }
        let read_only = tools.get(name).is_some_and(|tool| tool.read_only());
        let repeat = made.repeat(name, &args);
        if let Some(repeat) = &repeat {
            made.note_repeat(repeat);
        }
        let (record, of_done_write) = match repeat {
            Some(repeat) => (
                runtime
                    .reject_in_turn(
                        tools,
                        name,
                        args.clone(),
                        (FailureKind::Repeated, repeat.answer),
                        at,
                    )
                    .await,
                repeat.of_done_write,
            ),
            None => (
                runtime.call_in_turn(tools, name, args.clone(), at).await,
                false,
            ),
        };
        if record.failure != Some(FailureKind::Repeated) {
            made.record(name, &args, read_only, at.call_index, &record.envelope);
        }
        (record, of_done_write)
    }
}
