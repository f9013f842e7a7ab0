//! The wgpu screening backend (`--features gpu`): Vulkan, Metal or DX12,
//! one WGSL invocation per combination, f32 on device.
//!
//! The host decodes each chunk of the grid exactly as the CPU backend does
//! (grid index → parameters, constraints in f64, indicator offsets), uploads
//! parameters and offsets, dispatches, reads back one score per combination
//! and keeps the top K on the host in index order: ties break by grid index
//! and the result does not depend on the chunk size. Indicators are computed
//! once on the host and uploaded once. Scores differ from the CPU's f64 by
//! f32 rounding (and, rarely, a crossing decided the other way on nearly
//! equal values); verification re-scores the kept candidates exactly.

use std::collections::HashMap;

use rayon::prelude::*;
use sieve_core::grid::GridIndex;
use sieve_core::indicators::{Indicator, IndicatorSet};
use sieve_core::metrics::Objective;
use sieve_core::strategy::{Direction, GeneratedKernel, GpuKernel};
use sieve_core::{
    engine::{Conventions, Fill},
    Error, Result,
};
use wgpu::util::DeviceExt;

use std::ops::ControlFlow;

use crate::backend::{Checkpoint, Running, ScreenBackend, ScreenJob, Screened};
use crate::cpu::CHUNK;
use crate::{CpuBackend, ObjectiveStats, Scored};

const SHADER: &str = crate::wgsl::ENGINE;
const WORKGROUP: u32 = 64;
/// Grid indices decoded per parallel host task.
const DECODE_BLOCK: u64 = 4096;

/// One chunk, decoded on the host: the allowed grid indices in order, and
/// per combination its parameters (f32) and kernel offsets, flat.
#[derive(Default)]
struct Decoded {
    index: Vec<GridIndex>,
    /// Each one's position in the batch (its chunk for the statistics).
    position: Vec<u64>,
    params: Vec<f32>,
    offs: Vec<u32>,
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Uniforms {
    count: u32,
    n_params: u32,
    n_offs: u32,
    end: u32,
    win_start: u32,
    fill_close: u32,
    long_short: u32,
    objective: u32,
    min_trades: u32,
    n_bars: u32,
    /// The score window's bars inside the screen window (its Sharpe for
    /// the Deflated Sharpe, in the same pass); 0..0 when they are one.
    inner_start: u32,
    inner_end: u32,
    fee: f32,
    slippage: f32,
    lot_size: f32,
    initial_cash: f32,
    years: f32,
    sqrt_periods: f32,
    max_leverage: f32,
    _pad2: f32,
}

pub struct GpuBackend {
    device: wgpu::Device,
    queue: wgpu::Queue,
    cross: wgpu::ComputePipeline,
    activation: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
    info: wgpu::AdapterInfo,
    limits: wgpu::Limits,
    max_chunk: u64,
    /// Generated rule kernels, by their WGSL: built once per strategy per run.
    rule_pipelines: std::sync::Mutex<HashMap<String, std::sync::Arc<wgpu::ComputePipeline>>>,
    /// The first device error wgpu reported, if any.
    failure: std::sync::Arc<std::sync::Mutex<Option<String>>>,
}

impl GpuBackend {
    /// Finds an adapter (a clear error when there is none) and builds the kernels.
    pub fn new() -> Result<Self> {
        let instance =
            wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            ..Default::default()
        }))
        .map_err(|e| {
            Error::Gpu(format!(
                "no GPU adapter found ({e}); install a Vulkan driver (Debian: mesa-vulkan-drivers libvulkan1) or use --backend cpu"
            ))
        })?;
        let info = adapter.get_info();
        let limits = adapter.limits();
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("sieve"),
            required_limits: limits.clone(),
            ..Default::default()
        }))
        .map_err(|e| {
            Error::Gpu(format!(
                "the GPU adapter '{}' refused a device: {e}",
                info.name
            ))
        })?;
        // wgpu's default reaction to a device error is a panic; record it
        // instead, and turn it into an error after each step.
        let failure: std::sync::Arc<std::sync::Mutex<Option<String>>> = Default::default();
        let sink = failure.clone();
        device.on_uncaptured_error(std::sync::Arc::new(move |e: wgpu::Error| {
            if let Ok(mut slot) = sink.lock() {
                slot.get_or_insert_with(|| e.to_string());
            }
        }));
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("screen.wgsl"),
            source: wgpu::ShaderSource::Wgsl(SHADER.into()),
        });
        // One explicit layout for every kernel (an automatic one drops the
        // bindings a kernel does not read).
        let buffer = |binding: u32, ty: wgpu::BufferBindingType| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty,
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        let read = wgpu::BufferBindingType::Storage { read_only: true };
        let write = wgpu::BufferBindingType::Storage { read_only: false };
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("screen"),
            entries: &[
                buffer(0, wgpu::BufferBindingType::Uniform),
                buffer(1, read),
                buffer(2, read),
                buffer(3, read),
                buffer(4, read),
                buffer(5, write),
                buffer(6, write),
                buffer(7, write),
            ],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("screen"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let pipeline = |entry: &str| {
            device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(entry),
                layout: Some(&pipeline_layout),
                module: &module,
                entry_point: Some(entry),
                compilation_options: Default::default(),
                cache: None,
            })
        };
        let cross = pipeline("cross");
        let activation = pipeline("activation");
        let backend = GpuBackend {
            device,
            queue,
            cross,
            activation,
            layout,
            info,
            limits,
            max_chunk: 1 << 20,
            rule_pipelines: Default::default(),
            failure,
        };
        backend.check()?;
        Ok(backend)
    }

    /// The recorded device error, as an error.
    fn check(&self) -> Result<()> {
        match self.failure.lock().ok().and_then(|mut f| f.take()) {
            Some(e) => Err(Error::Gpu(format!(
                "the GPU ({}) reported: {e}",
                self.info.name
            ))),
            None => Ok(()),
        }
    }

    /// The pipeline of a generated rule kernel: validated with naga first
    /// (a generator bug is a clear error, not a driver crash), then built
    /// once and cached.
    fn rule_pipeline(&self, source: &str) -> Result<std::sync::Arc<wgpu::ComputePipeline>> {
        let mut cache = self
            .rule_pipelines
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(p) = cache.get(source) {
            return Ok(p.clone());
        }
        use wgpu::naga;
        let invalid = |what: &str, detail: String| {
            Error::Gpu(format!(
                "internal error: the generated GPU kernel {what} (use --emit-wgsl to inspect it, or --backend cpu):\n{detail}"
            ))
        };
        let module = naga::front::wgsl::parse_str(source)
            .map_err(|e| invalid("does not parse", e.emit_to_string(source)))?;
        naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::default(),
        )
        .validate(&module)
        .map_err(|e| invalid("does not validate", e.emit_to_string(source)))?;
        let shader = self
            .device
            .create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some("rules.wgsl"),
                source: wgpu::ShaderSource::Wgsl(source.into()),
            });
        let pipeline_layout = self
            .device
            .create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some("rules"),
                bind_group_layouts: &[Some(&self.layout)],
                immediate_size: 0,
            });
        let pipeline = self
            .device
            .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(sieve_core::rules::ENTRY_POINT),
                layout: Some(&pipeline_layout),
                module: &shader,
                entry_point: Some(sieve_core::rules::ENTRY_POINT),
                compilation_options: Default::default(),
                cache: None,
            });
        self.check()?;
        let pipeline = std::sync::Arc::new(pipeline);
        cache.insert(source.to_string(), pipeline.clone());
        Ok(pipeline)
    }

    /// Caps the combinations per dispatch (default 2^20); results do not
    /// depend on it.
    pub fn with_max_chunk(mut self, max_chunk: u64) -> Self {
        self.max_chunk = max_chunk.max(1);
        self
    }

    fn storage(&self, label: &str, bytes: &[u8]) -> wgpu::Buffer {
        // wgpu refuses empty buffers; a 4-byte one stands in.
        let bytes = if bytes.is_empty() {
            &[0u8; 4][..]
        } else {
            bytes
        };
        self.device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents: bytes,
                usage: wgpu::BufferUsages::STORAGE,
            })
    }

    /// Combinations per dispatch: bounded by the dispatch size and by the
    /// largest storage binding the device allows.
    fn chunk_len(&self, floats_per_combo: u64) -> u64 {
        let by_dispatch =
            u64::from(self.limits.max_compute_workgroups_per_dimension) * u64::from(WORKGROUP);
        let by_binding =
            self.limits.max_storage_buffer_binding_size / (4 * floats_per_combo.max(1));
        by_dispatch.min(by_binding).min(self.max_chunk).max(1)
    }
}

/// Which kernel runs a strategy, and how its indicator offsets are laid out.
enum Kernel<'a> {
    Cross,
    Activation,
    /// A generated kernel (rule strategies).
    Generated(
        Box<dyn GeneratedKernel + 'a>,
        std::sync::Arc<wgpu::ComputePipeline>,
    ),
}

/// The objective's number in the kernels' `u.objective` (screen.wgsl's
/// `switch u.objective`; the uniform's comment lists the same numbers).
fn objective_code(objective: Objective) -> u32 {
    match objective {
        Objective::Calmar => 0,
        Objective::Sharpe => 1,
        Objective::Sortino => 2,
        Objective::Cagr => 3,
        Objective::TotalReturn => 4,
        Objective::ProfitFactor => 5,
    }
}

/// The indicator offsets a kernel reads — in the order the strategy lists
/// its indicators (cross: fast, slow; activation: trend score, RSI score,
/// channel position, ATR) — then the first bar the strategy may act on.
fn kernel_offsets(keys: &[Indicator], offset: &HashMap<Indicator, u32>) -> Vec<u32> {
    let mut v: Vec<u32> = keys.iter().map(|k| offset[k]).collect();
    v.push(sieve_core::strategy::warmup(keys) as u32);
    v
}

impl ScreenBackend for GpuBackend {
    fn name(&self) -> &'static str {
        "gpu"
    }

    fn describe(&self) -> String {
        format!(
            "gpu: {} ({:?}, {:?})",
            self.info.name, self.info.backend, self.info.device_type
        )
    }

    /// The GPU kernels screen one instrument, with a kernel the strategy
    /// has (hand-written or generated); the CPU screens the rest.
    fn fallback(&self, job: &ScreenJob<'_>) -> Option<String> {
        if let Some(book) = &job.market.portfolio {
            return Some(format!(
                "the GPU kernels screen one instrument at a time; screening the portfolio of {} instruments on the CPU",
                book.members.len()
            ));
        }
        if job.market.is_several() {
            return Some(format!(
                "the GPU kernels screen one instrument at a time; screening {} instruments on the CPU",
                job.market.instruments.len()
            ));
        }
        if job.market.primary().scoring.engine.conventions != Conventions::SIEVE {
            return Some(
                "the GPU kernels follow sieve's own stop conventions (backtest.conventions); screening on the CPU"
                    .to_string(),
            );
        }
        if job.market.primary().bars.detail.is_some() {
            return Some(
                "the GPU kernels do not walk detail bars (data.detail); screening on the CPU"
                    .to_string(),
            );
        }
        match job.strategy.gpu_kernel() {
            GpuKernel::Cross | GpuKernel::Activation | GpuKernel::Generated(_) => None,
            GpuKernel::Unsupported(construct) => Some(format!(
                "'{}' uses {construct}, which the GPU kernels cannot run; screening on the CPU",
                job.strategy.name()
            )),
            GpuKernel::None => Some(format!(
                "no GPU kernel for '{}'; screening on the CPU",
                job.strategy.name()
            )),
        }
    }

    fn screen(
        &self,
        job: &ScreenJob<'_>,
        on_batch: &mut dyn FnMut(&Checkpoint) -> Result<ControlFlow<()>>,
    ) -> Result<Screened> {
        // Checked first: no kernel is built for work the CPU will do.
        if self.fallback(job).is_some() {
            return CpuBackend.screen(job, on_batch);
        }
        let kernel = self.kernel(job)?;
        let (inputs, offset) = self.upload(job, &kernel)?;
        let (base, sharpe_known) = uniforms(job, &kernel);
        let pipeline: &wgpu::ComputePipeline = match &kernel {
            Kernel::Cross => &self.cross,
            Kernel::Activation => &self.activation,
            Kernel::Generated(_, p) => p,
        };
        let mut run = job.start();
        // The statistics are kept per chunk (as the CPU backend keeps
        // them): a dispatch ends on a chunk's bound where it can, and a
        // checkpoint falls only where no chunk is half filled.
        let chunk = self.chunk_len(u64::from(base.n_params + base.n_offs));
        let last = job.batch.positions().end;
        let first = run.next;
        let settled = |next: u64| next.is_multiple_of(CHUNK) || next == first || next == last;
        let mut chunk_stats = ChunkStats::at(run.next / CHUNK);
        while run.next < last {
            let mut end = last.min(run.next + chunk);
            if end < last && end / CHUNK * CHUNK > run.next {
                end = end / CHUNK * CHUNK;
            }
            if job.stopping() && settled(run.next) {
                // Between dispatches: the state so far is shown again,
                // where the stop is seen (as the CPU backend does).
                run.report(on_batch)?;
                return Ok(Screened::Stopped);
            }
            let decoded = decode(job, &kernel, &offset, run.next..end);
            if !decoded.index.is_empty() {
                let scores = self.dispatch(pipeline, &base, &inputs.0, &inputs.1, &decoded)?;
                for ((index, position), (score, trades, s)) in
                    decoded.index.iter().zip(&decoded.position).zip(scores)
                {
                    chunk_stats.reach(position / CHUNK, &mut run);
                    chunk_stats.stats.push(score);
                    if sharpe_known {
                        chunk_stats.sharpe.push(s);
                    }
                    if run.top.admits(score, *index) {
                        run.top.push(Scored {
                            index: *index,
                            score,
                            trades,
                        });
                    }
                }
            }
            // Every chunk the range completes, those with nothing allowed too.
            let done = if end == last {
                end.div_ceil(CHUNK)
            } else {
                end / CHUNK
            };
            chunk_stats.reach(done, &mut run);
            run.next = end;
            if settled(end) && run.report(on_batch)? {
                return Ok(Screened::Stopped);
            }
        }
        Ok(run.done())
    }
}

impl GpuBackend {
    /// The kernel of a job [`ScreenBackend::fallback`] passed (a rule
    /// strategy's generated and compiled here).
    fn kernel<'j>(&self, job: &ScreenJob<'j>) -> Result<Kernel<'j>> {
        Ok(match job.strategy.gpu_kernel() {
            GpuKernel::Cross => Kernel::Cross,
            GpuKernel::Activation => Kernel::Activation,
            GpuKernel::Generated(k) => {
                let pipeline = self.rule_pipeline(&crate::wgsl::generated_module(k.as_ref()))?;
                Kernel::Generated(k, pipeline)
            }
            GpuKernel::Unsupported(_) | GpuKernel::None => {
                return Err(Error::Gpu("no GPU kernel for this strategy".into()))
            }
        })
    }

    /// The bars and indicators (rules: shared columns) the kernel reads,
    /// computed once on the host and uploaded once, undefined values as one
    /// NaN bit pattern; and where each indicator starts. Only the columns
    /// the kernel reads (a rule kernel does not read the columns its shared
    /// columns are computed from), checked against the device's largest
    /// buffer before any is computed.
    #[allow(clippy::type_complexity)]
    fn upload(
        &self,
        job: &ScreenJob<'_>,
        kernel: &Kernel<'_>,
    ) -> Result<((wgpu::Buffer, wgpu::Buffer), HashMap<Indicator, u32>)> {
        let bars = &job.market.primary().bars;
        let wanted: Vec<Indicator> = job
            .strategy
            .space_indicators(job.space)
            .into_iter()
            .filter(|key| match kernel {
                Kernel::Generated(k, _) => k.reads(key),
                _ => true,
            })
            .collect();
        let bytes = wanted.len() as u64 * bars.len() as u64 * 4;
        if bytes > self.limits.max_storage_buffer_binding_size {
            return Err(Error::Gpu(format!(
                "the indicators of this grid ({} MB) exceed the GPU's largest buffer; narrow the int ranges or use --backend cpu",
                bytes / 1_000_000
            )));
        }
        let set = IndicatorSet::build_for(bars, job.strategy.series(), wanted.clone());
        let mut flat: Vec<f32> = Vec::with_capacity(wanted.len() * bars.len());
        let mut offset: HashMap<Indicator, u32> = HashMap::new();
        for key in wanted {
            offset.insert(key, flat.len() as u32);
            flat.extend(set.get(key).iter().map(|&v| device_f32(v)));
        }
        drop(set);
        let columns: Vec<&[f64]> = match kernel {
            Kernel::Generated(..) => sieve_core::rules::BAR_COLUMNS
                .iter()
                .map(|&c| sieve_core::rules::column(bars, c).unwrap_or(&[]))
                .collect(),
            _ => vec![&bars.open, &bars.close],
        };
        let mut bar_data: Vec<f32> = Vec::with_capacity(bars.len() * columns.len());
        for c in columns {
            match c.is_empty() {
                // No volume in the data: the rules do not read it (checked).
                true => bar_data.extend(std::iter::repeat_n(0.0, bars.len())),
                false => bar_data.extend(c.iter().map(|&v| v as f32)),
            }
        }
        let bars_buf = self.storage("bars", bytemuck::cast_slice(&bar_data));
        let ind_buf = self.storage("indicators", bytemuck::cast_slice(&flat));
        Ok(((bars_buf, ind_buf), offset))
    }
}

/// The uniforms every dispatch of a job shares (`count` set per
/// dispatch), and whether the trials' Sharpe is known: the screen
/// window's own when the two are the same bars, else accumulated beside
/// it where it lies inside (a score window outside the screen window
/// leaves it unknown).
fn uniforms(job: &ScreenJob<'_>, kernel: &Kernel<'_>) -> (Uniforms, bool) {
    let scoring = &job.market.primary().scoring;
    let bars = &job.market.primary().bars;
    let window = scoring.screen;
    let score = scoring.windows.score;
    let same = window.same_bars(&score);
    let inside = window.start <= score.start && score.end <= window.end;
    let inner = match same {
        true => 0..0,
        false => score.start..score.end,
    };
    let from = bars.time[window.start.saturating_sub(1)] as f64;
    let years =
        (bars.time[window.end - 1] as f64 - from) / sieve_core::data::MS_PER_DAY as f64 / 365.25;
    let (n_params, n_offs) = match kernel {
        Kernel::Generated(k, _) => (k.n_values(), k.n_columns()),
        _ => {
            let mut keys = Vec::new();
            job.strategy.indicators(&job.space.params_of(0), &mut keys);
            (job.strategy.params().len(), keys.len() + 1)
        }
    };
    let base = Uniforms {
        count: 0,
        n_params: n_params as u32,
        n_offs: n_offs as u32,
        end: window.end as u32,
        win_start: window.start as u32,
        fill_close: u32::from(scoring.engine.fill == Fill::Close),
        long_short: u32::from(scoring.direction == Direction::LongShort),
        objective: objective_code(scoring.objective),
        min_trades: scoring.min_trades.min(u64::from(u32::MAX)) as u32,
        n_bars: bars.len() as u32,
        inner_start: inner.start as u32,
        inner_end: inner.end as u32,
        fee: scoring.engine.fee as f32,
        slippage: scoring.engine.slippage as f32,
        lot_size: scoring.engine.lot_size as f32,
        initial_cash: scoring.engine.initial_cash as f32,
        years: years as f32,
        sqrt_periods: scoring.periods_per_year.sqrt() as f32,
        max_leverage: scoring.engine.max_leverage as f32,
        _pad2: 0.0,
    };
    (base, same || inside)
}

/// The positions `positions` of a job's batch decoded on the host, in
/// parallel blocks, in index order, straight into the flat arrays the
/// device reads: the allowed grid indices, their parameters and offsets.
fn decode(
    job: &ScreenJob<'_>,
    kernel: &Kernel<'_>,
    offset: &HashMap<Indicator, u32>,
    positions: std::ops::Range<u64>,
) -> Decoded {
    let end = positions.end;
    let blocks: Vec<Decoded> = positions
        .step_by(DECODE_BLOCK as usize)
        .collect::<Vec<_>>()
        .into_par_iter()
        .map(|lo| {
            let mut d = Decoded::default();
            let mut p = vec![0.0; job.strategy.params().len()];
            let (mut keys, mut scalars) = (Vec::new(), Vec::new());
            for position in lo..end.min(lo + DECODE_BLOCK) {
                let index = job.batch.index_at(position);
                job.space.params_at(index, &mut p);
                if !job.space.allowed(&p) {
                    continue;
                }
                keys.clear();
                d.index.push(index);
                d.position.push(position);
                match kernel {
                    Kernel::Generated(k, _) => {
                        k.inputs(&p, &mut scalars, &mut d.params, &mut keys);
                        d.offs.extend(keys.iter().map(|key| offset[key]));
                    }
                    _ => {
                        job.strategy.indicators(&p, &mut keys);
                        d.params.extend(p.iter().map(|&v| v as f32));
                        d.offs.extend(kernel_offsets(&keys, offset));
                    }
                }
            }
            d
        })
        .collect();
    let mut decoded = Decoded::default();
    for block in blocks {
        decoded.index.extend(block.index);
        decoded.position.extend(block.position);
        decoded.params.extend(block.params);
        decoded.offs.extend(block.offs);
    }
    decoded
}

/// The statistics of the chunk being filled, handed to the screen's trees
/// chunk by chunk as the positions move on.
struct ChunkStats {
    chunk: u64,
    stats: ObjectiveStats,
    sharpe: ObjectiveStats,
}

impl ChunkStats {
    fn at(chunk: u64) -> ChunkStats {
        ChunkStats {
            chunk,
            stats: ObjectiveStats::default(),
            sharpe: ObjectiveStats::default(),
        }
    }

    /// Hands over every chunk before `chunk` (empty ones too).
    fn reach(&mut self, chunk: u64, run: &mut Running) {
        while self.chunk < chunk {
            let done = std::mem::replace(self, ChunkStats::at(self.chunk + 1));
            run.stats.push_chunk(done.chunk, done.stats);
            run.sharpe.push_chunk(done.chunk, done.sharpe);
        }
    }
}

/// A value as the device reads it: undefined (NaN) as one bit pattern.
fn device_f32(v: f64) -> f32 {
    if v.is_nan() {
        f32::from_bits(sieve_core::rules::NAN_BITS)
    } else {
        v as f32
    }
}

impl GpuBackend {
    /// Runs one chunk; (score, trades, per-bar Sharpe of the score window)
    /// per combination, NaN where the CPU would give NaN.
    fn dispatch(
        &self,
        pipeline: &wgpu::ComputePipeline,
        base: &Uniforms,
        bars: &wgpu::Buffer,
        ind: &wgpu::Buffer,
        decoded: &Decoded,
    ) -> Result<Vec<(f64, u64, f64)>> {
        let count = decoded.index.len();
        let (params, offs) = (&decoded.params, &decoded.offs);
        let uniforms = Uniforms {
            count: count as u32,
            ..*base
        };
        let uniform_buf = self
            .device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("uniforms"),
                contents: bytemuck::bytes_of(&uniforms),
                usage: wgpu::BufferUsages::UNIFORM,
            });
        let params_buf = self.storage("params", bytemuck::cast_slice(params));
        let offs_buf = self.storage("offsets", bytemuck::cast_slice(offs));
        let bytes = (count * 4) as u64;
        let out = |label| {
            self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: bytes,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            })
        };
        let (score_buf, info_buf, sharpe_buf) = (out("scores"), out("info"), out("sharpe"));
        let read = |label| {
            self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: bytes * 3,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        };
        let staging = read("staging");
        fn entry(binding: u32, buffer: &wgpu::Buffer) -> wgpu::BindGroupEntry<'_> {
            wgpu::BindGroupEntry {
                binding,
                resource: buffer.as_entire_binding(),
            }
        }
        let bind = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("screen"),
            layout: &self.layout,
            entries: &[
                entry(0, &uniform_buf),
                entry(1, bars),
                entry(2, ind),
                entry(3, &params_buf),
                entry(4, &offs_buf),
                entry(5, &score_buf),
                entry(6, &info_buf),
                entry(7, &sharpe_buf),
            ],
        });
        let mut encoder = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("screen"),
            });
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("screen"),
                timestamp_writes: None,
            });
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, &bind, &[]);
            pass.dispatch_workgroups((count as u32).div_ceil(WORKGROUP), 1, 1);
        }
        encoder.copy_buffer_to_buffer(&score_buf, 0, &staging, 0, bytes);
        encoder.copy_buffer_to_buffer(&info_buf, 0, &staging, bytes, bytes);
        encoder.copy_buffer_to_buffer(&sharpe_buf, 0, &staging, 2 * bytes, bytes);
        self.queue.submit([encoder.finish()]);
        let slice = staging.slice(..);
        let (tx, rx) = std::sync::mpsc::channel();
        slice.map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r);
        });
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| Error::Gpu(format!("the GPU failed: {e}")))?;
        self.check()?;
        rx.recv()
            .map_err(|e| Error::Gpu(format!("the GPU result never arrived: {e}")))?
            .map_err(|e| Error::Gpu(format!("reading GPU results: {e}")))?;
        let view = slice
            .get_mapped_range()
            .map_err(|e| Error::Gpu(format!("reading GPU results: {e}")))?;
        let words: &[u32] = bytemuck::cast_slice(&view);
        let (scores, rest) = words.split_at(count);
        let (infos, sharpes) = rest.split_at(count);
        let out = scores
            .iter()
            .zip(infos)
            .zip(sharpes)
            .map(|((&s, &info), &sharpe)| {
                let nan = info >> 31 == 1;
                let score = f32::from_bits(s);
                let score = if nan {
                    f64::NAN
                } else if score >= 3.0e38 {
                    f64::INFINITY
                } else {
                    f64::from(score)
                };
                let sharpe = if info >> 30 & 1 == 1 {
                    f64::NAN
                } else {
                    f64::from(f32::from_bits(sharpe))
                };
                (score, u64::from(info & 0x3fff_ffff), sharpe)
            })
            .collect();
        drop(view);
        staging.unmap();
        Ok(out)
    }
}
