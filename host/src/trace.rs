//! Timelines: what a traced scope's lanes did and when, from CUDA event timestamps (GPU
//! side) and the host clock (enqueue side), as a [`Trace`] that renders to Chrome trace JSON
//! (opens in Perfetto and `chrome://tracing`) and to an SVG picture.
//!
//! A scope is traced only when asked ([`traced_scope`](crate::traced_scope),
//! [`LaneSet::traced_scope`](crate::LaneSet::traced_scope)): then every launch, copy, fill
//! and foreign fence wait is bracketed by two timing events on its lane (the cost of a
//! trace, and the only events sluice records that the program did not ask for by name —
//! asking for the trace asks for them). Untraced scopes pay one branch per operation.
//!
//! The host and GPU clocks are aligned at one point: a timing event recorded on an idle
//! stream when the trace starts is taken to complete at the host instant of its record.

use std::fmt::Write as _;
use std::sync::Mutex;
use std::time::Instant;

use crate::device::Gpu;
use crate::error::{Error, LaneId, Result};
use crate::handle::{Event, StreamHandle};
use crate::plan::Submission;

/// What a traced span was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SpanKind {
    /// A kernel launch.
    Launch,
    /// A device-to-host copy.
    CopyToHost,
    /// A host-to-device copy.
    CopyToDevice,
    /// A zero-fill.
    Fill,
    /// A GPU-side wait for another lane's fence (`cuStreamWaitEvent`): how long the lane
    /// stood still.
    Wait,
    /// A device-to-device copy between two GPUs (or within one): its name says which way and
    /// which path ([`PeerPath`](crate::PeerPath)).
    PeerCopy,
    /// One rank's part of a collective (NCCL's all-reduce, all-gather, broadcast,
    /// reduce-scatter), from the lane's point of view: it includes the time the lane waited
    /// for the other ranks.
    Collective,
    /// A launch of an executable graph: a user's [`Graph`](crate::Graph) replayed, or a
    /// repeated scope's own operations submitted as one cached graph (its name says which,
    /// and what the graph holds; [`Trace::submissions`] says how each submission ran).
    Graph,
}

impl SpanKind {
    fn label(self) -> &'static str {
        match self {
            SpanKind::Launch => "kernel",
            SpanKind::CopyToHost => "copy to host",
            SpanKind::CopyToDevice => "copy to device",
            SpanKind::Fill => "fill",
            SpanKind::Wait => "fence wait",
            SpanKind::PeerCopy => "peer copy",
            SpanKind::Collective => "collective",
            SpanKind::Graph => "graph",
        }
    }

    fn color(self) -> &'static str {
        match self {
            SpanKind::Launch => "#4e79a7",
            SpanKind::CopyToHost => "#f28e2b",
            SpanKind::CopyToDevice => "#59a14f",
            SpanKind::Fill => "#b07aa1",
            SpanKind::Wait => "#bab0ac",
            SpanKind::PeerCopy => "#e15759",
            SpanKind::Collective => "#76b7b2",
            SpanKind::Graph => "#edc948",
        }
    }
}

/// One traced operation: where it ran, what it was, when the GPU ran it and when the host
/// enqueued it, in microseconds from the start of the trace.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceSpan {
    /// The lane.
    pub lane: LaneId,
    /// What it was.
    pub kind: SpanKind,
    /// The kernel's name, or what was copied.
    pub name: String,
    /// When the lane reached it on the GPU (µs).
    pub gpu_start_us: f64,
    /// When the GPU finished it (µs).
    pub gpu_end_us: f64,
    /// When the host began enqueuing it (µs).
    pub host_start_us: f64,
    /// When the host had enqueued it (µs).
    pub host_end_us: f64,
}

/// A traced scope's timeline: every span of every lane.
///
/// ```no_run
/// # use sluice_host as sluice;
/// # fn demo(gpu: &sluice::Gpu) -> Result<(), Box<dyn std::error::Error>> {
/// let ((), trace) = sluice::traced_scope(gpu, |s| {
///     let m = s.alloc_buffer::<f32>(1 << 20)?;
///     s.lane()?.enter(|st| { let mut v = st.bind(m.as_columns_mut()); st.zero(&mut v) })
/// })?;
/// std::fs::write("scope.json", trace.to_chrome_json())?;  // open in ui.perfetto.dev
/// std::fs::write("scope.svg", trace.to_svg())?;
/// assert_eq!(trace.lanes(), vec![sluice::LaneId::Lane(0)]);
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trace {
    /// Every span, in enqueue order.
    pub spans: Vec<TraceSpan>,
    /// How the scope's work reached the GPU: one entry per submission (each host wait that
    /// needed pending work, each segment ([`SubmitConfig::segment_lanes`](crate::SubmitConfig::segment_lanes)),
    /// each flush at [`SubmitConfig::max_deferred`](crate::SubmitConfig::max_deferred)
    /// operations, and the scope's end), saying whether it went operation by operation or as
    /// a graph, and what was merged or left out ([`Submission::segment`] marks segments).
    /// Empty where nothing was deferred ([`SubmitConfig::direct`](crate::SubmitConfig::direct)):
    /// each operation went to the driver as it was asked for, and [`spans`](Trace::spans)
    /// shows each.
    pub submissions: Vec<Submission>,
}

impl Trace {
    /// The lanes that appear in the trace, in order.
    pub fn lanes(&self) -> Vec<LaneId> {
        let mut lanes: Vec<LaneId> = self.spans.iter().map(|s| s.lane).collect();
        lanes.sort();
        lanes.dedup();
        lanes
    }

    /// The end of the last GPU span (µs from the start of the trace).
    pub fn gpu_end_us(&self) -> f64 {
        self.spans.iter().map(|s| s.gpu_end_us).fold(0.0, f64::max)
    }

    /// Chrome trace JSON (the "trace event" format): opens in Perfetto (ui.perfetto.dev) and
    /// `chrome://tracing`. Process 1 is the GPU with one track per lane; process 2 is the
    /// host, with one track per lane for the enqueue spans.
    pub fn to_chrome_json(&self) -> String {
        let mut out = String::from("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
        let mut first = true;
        let mut event = |out: &mut String, body: String| {
            if !first {
                out.push_str(",\n");
            }
            first = false;
            out.push_str(&body);
        };
        for (pid, name) in [(1, "GPU"), (2, "host (enqueue)")] {
            event(&mut out, format!("{{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":{pid},\"tid\":0,\"args\":{{\"name\":\"{name}\"}}}}"));
        }
        for lane in self.lanes() {
            for pid in [1, 2] {
                event(
                    &mut out,
                    format!(
                        "{{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":{pid},\"tid\":{},\"args\":{{\"name\":\"{lane}\"}}}}",
                        tid(lane)
                    ),
                );
            }
        }
        for s in &self.spans {
            let name = json_escape(&s.name);
            let cat = s.kind.label();
            event(
                &mut out,
                format!(
                    "{{\"ph\":\"X\",\"name\":\"{name}\",\"cat\":\"{cat}\",\"pid\":1,\"tid\":{},\"ts\":{:.3},\"dur\":{:.3}}}",
                    tid(s.lane),
                    s.gpu_start_us,
                    (s.gpu_end_us - s.gpu_start_us).max(0.0)
                ),
            );
            event(
                &mut out,
                format!(
                    "{{\"ph\":\"X\",\"name\":\"enqueue {name}\",\"cat\":\"{cat}\",\"pid\":2,\"tid\":{},\"ts\":{:.3},\"dur\":{:.3}}}",
                    tid(s.lane),
                    s.host_start_us,
                    (s.host_end_us - s.host_start_us).max(0.0)
                ),
            );
        }
        out.push_str("\n]}\n");
        out
    }

    /// An SVG picture of the GPU timeline: one row per lane, one box per span, coloured by
    /// kind (kernels blue, copies to the host orange, to the device green, fills purple, fence
    /// waits grey), with a time axis in milliseconds.
    pub fn to_svg(&self) -> String {
        let lanes = self.lanes();
        let (left, top, row, width) = (90.0, 30.0, 18.0, 900.0);
        let end = self.gpu_end_us().max(1.0);
        let scale = width / end;
        let height = top + row * lanes.len() as f64 + 40.0;
        let mut svg = String::new();
        let _ = writeln!(
            svg,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"11\">",
            left + width + 20.0
        );
        let _ = writeln!(svg, "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>");
        for (i, lane) in lanes.iter().enumerate() {
            let y = top + row * i as f64;
            let _ = writeln!(svg, "<text x=\"4\" y=\"{:.1}\">{lane}</text>", y + row * 0.7);
            let _ = writeln!(
                svg,
                "<line x1=\"{left}\" x2=\"{:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"#eee\"/>",
                left + width,
                y + row,
                y + row
            );
        }
        for s in &self.spans {
            let Some(i) = lanes.iter().position(|l| *l == s.lane) else { continue };
            let x = left + s.gpu_start_us * scale;
            let w = ((s.gpu_end_us - s.gpu_start_us) * scale).max(0.5);
            let y = top + row * i as f64 + 2.0;
            let _ = writeln!(
                svg,
                "<rect x=\"{x:.2}\" y=\"{y:.1}\" width=\"{w:.2}\" height=\"{:.1}\" fill=\"{}\"><title>{}: {} ({:.1} µs)</title></rect>",
                row - 4.0,
                s.kind.color(),
                s.kind.label(),
                xml_escape(&s.name),
                s.gpu_end_us - s.gpu_start_us
            );
        }
        let axis = top + row * lanes.len() as f64 + 14.0;
        let ticks = 5;
        for t in 0..=ticks {
            let us = end * t as f64 / ticks as f64;
            let x = left + us * scale;
            let _ =
                writeln!(svg, "<text x=\"{x:.1}\" y=\"{axis:.1}\" text-anchor=\"middle\">{:.3} ms</text>", us / 1000.0);
        }
        let legend = axis + 16.0;
        // The kinds that appear (the first five always, for a familiar legend).
        let shown = [
            SpanKind::Launch,
            SpanKind::CopyToHost,
            SpanKind::CopyToDevice,
            SpanKind::Fill,
            SpanKind::Wait,
            SpanKind::PeerCopy,
            SpanKind::Collective,
        ];
        let shown = shown.iter().enumerate().filter(|(i, k)| *i < 5 || self.spans.iter().any(|s| s.kind == **k));
        for (k, (_, kind)) in shown.enumerate() {
            let x = left + 150.0 * k as f64;
            let _ = writeln!(
                svg,
                "<rect x=\"{x:.1}\" y=\"{:.1}\" width=\"10\" height=\"10\" fill=\"{}\"/><text x=\"{:.1}\" y=\"{legend:.1}\">{}</text>",
                legend - 9.0,
                kind.color(),
                x + 14.0,
                kind.label()
            );
        }
        svg.push_str("</svg>\n");
        svg.replacen(&format!("height=\"{height}\""), &format!("height=\"{}\"", legend + 10.0), 1)
    }
}

/// A lane's track id in the Chrome trace (the upload lane first).
fn tid(lane: LaneId) -> usize {
    match lane {
        LaneId::Upload => 0,
        LaneId::Lane(n) => n + 1,
    }
}

fn json_escape(s: &str) -> String {
    s.chars()
        .flat_map(|c| match c {
            '"' => vec!['\\', '"'],
            '\\' => vec!['\\', '\\'],
            c if (c as u32) < 0x20 => format!("\\u{:04x}", c as u32).chars().collect(),
            c => vec![c],
        })
        .collect()
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// One traced operation, until the scope has joined and its events can be read.
struct Mark {
    lane: LaneId,
    kind: SpanKind,
    name: String,
    begin: Event,
    end: Event,
    host_begin: Instant,
    host_end: Instant,
}

/// The marks of a traced scope, collected while it runs.
pub(crate) struct Recorder {
    start: Event,
    host_start: Instant,
    marks: Mutex<Vec<Mark>>,
}

/// What [`Recorder::begin`] returns for [`Recorder::end`]: the begin event and host instant.
pub(crate) struct Open {
    begin: Event,
    host_begin: Instant,
}

impl Recorder {
    /// Starts a trace: the reference event is recorded on `idle`, a stream with nothing
    /// enqueued, so it completes at once.
    pub(crate) fn start(gpu: &Gpu, idle: &StreamHandle) -> Result<Recorder> {
        let start = gpu.take_event(true)?;
        let host_start = Instant::now();
        start.record(idle).map_err(|error| Error::Event { call: "cuEventRecord", error })?;
        Ok(Recorder { start, host_start, marks: Mutex::new(Vec::new()) })
    }

    /// The host time the trace's spans count from.
    pub(crate) fn host_start(&self) -> Instant {
        self.host_start
    }

    /// Records the begin event of an operation about to be enqueued on `stream`.
    pub(crate) fn begin(&self, gpu: &Gpu, stream: &StreamHandle) -> Result<Open> {
        let host_begin = Instant::now();
        let begin = gpu.take_event(true)?;
        begin.record(stream).map_err(|error| Error::Event { call: "cuEventRecord", error })?;
        Ok(Open { begin, host_begin })
    }

    /// Records the end event of the operation just enqueued on `stream`.
    pub(crate) fn end(
        &self,
        gpu: &Gpu,
        stream: &StreamHandle,
        open: Open,
        lane: LaneId,
        kind: SpanKind,
        name: impl Into<String>,
    ) -> Result<()> {
        let end = gpu.take_event(true)?;
        end.record(stream).map_err(|error| Error::Event { call: "cuEventRecord", error })?;
        let host_end = Instant::now();
        let mark =
            Mark { lane, kind, name: name.into(), begin: open.begin, end, host_begin: open.host_begin, host_end };
        self.marks.lock().unwrap_or_else(|p| p.into_inner()).push(mark);
        Ok(())
    }

    /// The timeline, once every lane has been joined (every event has completed); the
    /// events go back to the device's pool. `faulted`: a lane of the scope stopped at a
    /// fault (the CPU backend), so some events were never reached: their spans are left out
    /// (the fault is the scope's error) instead of failing the trace.
    pub(crate) fn finish(&self, gpu: &Gpu, faulted: bool) -> Result<Trace> {
        // `CUDA_ERROR_NOT_READY`: an event never recorded.
        const NOT_READY: u32 = 600;
        let marks = std::mem::take(&mut *self.marks.lock().unwrap_or_else(|p| p.into_inner()));
        let us = |e: &Event| -> Result<f64> {
            e.elapsed_ms_since(&self.start)
                .map(|ms| ms as f64 * 1000.0)
                .map_err(|error| Error::Event { call: "cuEventElapsedTime", error })
        };
        let host = |t: Instant| t.saturating_duration_since(self.host_start).as_secs_f64() * 1e6;
        let mut spans = Vec::with_capacity(marks.len());
        let mut events = Vec::with_capacity(2 * marks.len() + 1);
        let mut first_error = None;
        for m in marks {
            match (us(&m.begin), us(&m.end)) {
                (Ok(gpu_start_us), Ok(gpu_end_us)) => spans.push(TraceSpan {
                    lane: m.lane,
                    kind: m.kind,
                    name: m.name,
                    gpu_start_us,
                    gpu_end_us,
                    host_start_us: host(m.host_begin),
                    host_end_us: host(m.host_end),
                }),
                (Err(Error::Event { error, .. }), _) | (_, Err(Error::Event { error, .. }))
                    if faulted && error.code() == NOT_READY => {}
                (Err(e), _) | (_, Err(e)) => {
                    first_error.get_or_insert(e);
                }
            }
            events.push(m.begin);
            events.push(m.end);
        }
        gpu.recycle_events(events);
        match first_error {
            Some(e) => Err(e),
            None => Ok(Trace { spans, submissions: Vec::new() }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(lane: LaneId, kind: SpanKind, name: &str, a: f64, b: f64) -> TraceSpan {
        TraceSpan {
            lane,
            kind,
            name: name.into(),
            gpu_start_us: a,
            gpu_end_us: b,
            host_start_us: a / 2.0,
            host_end_us: a / 2.0 + 1.0,
        }
    }

    fn sample() -> Trace {
        Trace {
            spans: vec![
                span(LaneId::Lane(0), SpanKind::Launch, "potential", 10.0, 110.0),
                span(LaneId::Lane(0), SpanKind::CopyToHost, "column \"0\"", 110.0, 130.0),
                span(LaneId::Lane(1), SpanKind::Wait, "fence", 5.0, 20.0),
                span(LaneId::Upload, SpanKind::CopyToDevice, "sources", 0.0, 5.0),
            ],
            submissions: Vec::new(),
        }
    }

    #[test]
    fn chrome_json_has_one_track_per_lane_and_escapes_names() {
        let json = sample().to_chrome_json();
        assert!(json.starts_with("{\"displayTimeUnit\":\"ms\",\"traceEvents\":["));
        assert!(json.contains("\"args\":{\"name\":\"lane 0\"}"));
        assert!(json.contains("\"args\":{\"name\":\"lane 1\"}"));
        assert!(json.contains("\"args\":{\"name\":\"the scope's upload lane\"}"));
        assert!(json.contains("\"name\":\"column \\\"0\\\"\""));
        assert!(json.contains("\"ts\":10.000,\"dur\":100.000"));
        assert_eq!(json.matches("\"ph\":\"X\"").count(), 8);
        assert_eq!(sample().lanes(), [LaneId::Lane(0), LaneId::Lane(1), LaneId::Upload]);
    }

    #[test]
    fn svg_has_a_row_per_lane_and_a_box_per_span() {
        let svg = sample().to_svg();
        assert!(svg.starts_with("<svg"));
        assert!(svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches("<title>").count(), 4);
        assert!(svg.contains(">lane 1</text>"));
        assert!(svg.contains("0.130 ms"));
    }
}
