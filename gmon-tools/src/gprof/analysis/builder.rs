//! Building an [`Analysis`]: the symbol table, then each profile as it is read, then the
//! histogram credit and the call graph.

use gmon_binary::{Image, arch};
use gmon_format::{Profile, Record, Variant};

use super::static_calls::StaticCalls;
use super::{
    Analysis, AnalysisOptions, CallGraph, GprofError, Histograms, SpecTables, SymbolTable, TableId,
    hist, names_shown, specs_with_defaults,
};

/// Counts of what one profile file contained (what `-i` prints).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FileInfo {
    /// Header version (0 for BSD files).
    pub version: u32,
    /// Histogram records.
    pub histograms: usize,
    /// Call-graph arc records.
    pub arcs: usize,
    /// Basic-block count records.
    pub bb_records: usize,
}

/// Builds an [`Analysis`] the way gprof does: symbols first, then each profile as it is read,
/// then the histogram credit and the call graph.
#[derive(Debug)]
pub struct AnalysisBuilder {
    symtab: SymbolTable,
    specs: SpecTables,
    hist: Histograms,
    graph: CallGraph,
    has_arcs: bool,
    has_bb: bool,
    whoami: String,
    static_call_graph: bool,
}

impl AnalysisBuilder {
    /// Reads `image`'s function symbols and resolves the specs.
    pub fn new(image: &Image, opts: &AnalysisOptions) -> Result<AnalysisBuilder, GprofError> {
        let symtab = SymbolTable::from_image(image, &opts.symtab, &opts.whoami)?;
        Ok(AnalysisBuilder::with_symtab(symtab, opts))
    }

    /// Starts from a symbol table built elsewhere (e.g. with line symbols added, or source files
    /// attached).
    pub fn with_symtab(symtab: SymbolTable, opts: &AnalysisOptions) -> AnalysisBuilder {
        let specs = || SpecTables::build(&specs_with_defaults(&opts.specs), &symtab);
        // Both read or write every symbol's entry: on a large program the specs are matched
        // on a second thread while the graph's nodes are made (dense20k: ~1 ms each).
        let (specs, graph) = if symtab.len() >= crate::gprof::PARALLEL_SYMBOLS {
            std::thread::scope(|scope| {
                let specs = scope.spawn(specs);
                let graph = CallGraph::new(symtab.len());
                let specs = specs
                    .join()
                    .unwrap_or_else(|e| std::panic::resume_unwind(e));
                (specs, graph)
            })
        } else {
            (specs(), CallGraph::new(symtab.len()))
        };
        AnalysisBuilder {
            symtab,
            specs,
            hist: Histograms::default(),
            graph,
            has_arcs: false,
            has_bb: false,
            whoami: opts.whoami.clone(),
            static_call_graph: opts.static_call_graph,
        }
    }

    /// Says how many profiles will be added (see [`CallGraph::expect_profiles`]).
    pub fn expect_profiles(&mut self, count: usize) {
        self.graph.expect_profiles(count);
    }

    /// The symbol table.
    pub fn symtab(&self) -> &SymbolTable {
        &self.symtab
    }

    /// Adds one profile (`name` is used in messages): histogram records are combined, arcs
    /// tallied in file order.
    pub fn add_profile(&mut self, name: &str, profile: &Profile) -> Result<FileInfo, GprofError> {
        self.add_records(name, profile, None)
    }

    /// [`AnalysisBuilder::add_profile`] that may take the histogram bins out of `profile`
    /// (leaving them empty) instead of copying them, for a caller done with them.
    pub fn add_profile_taking(
        &mut self,
        name: &str,
        profile: &mut Profile,
    ) -> Result<FileInfo, GprofError> {
        let variant = profile.header.variant();
        let mut histograms = 0;
        // Histogram and arc records do not interact: summing every histogram first gives the
        // same result, and the same first error, as the reading in file order.
        for r in &mut profile.records {
            if let Record::Histogram(h) = r {
                // `-i` counts a BSD file's histogram only when it has bins.
                if variant == Variant::Gnu || !h.bins.is_empty() {
                    histograms += 1;
                }
                self.hist.add_taking(h, name, &self.whoami, variant)?;
            }
        }
        self.add_records(name, profile, Some(histograms))
    }

    /// [`AnalysisBuilder::add_profile`] for a GNU file read in place: the same histograms and
    /// arcs, decoded from the file's bytes as they are added. The file's only histogram, when
    /// it is a new range, keeps its bins in the file's bytes, which the builder then keeps.
    pub fn add_gnu_file(
        &mut self,
        name: &str,
        file: gmon_format::read::GnuFile,
    ) -> Result<FileInfo, GprofError> {
        let endian = file.encoding().endian;
        let mut info = FileInfo {
            version: gmon_format::GMON_VERSION,
            ..FileInfo::default()
        };
        let only = file.histograms().len() == 1;
        let mut keep = None;
        for h in file.histograms() {
            info.histograms += 1;
            if !only {
                self.hist.add_view(&h, endian, name, &self.whoami)?;
            } else if self.hist.check_view(&h, endian, name, &self.whoami)? {
                // Where the bins are in the file: the view is a slice of its bytes.
                let start = (h.bins.as_ptr() as usize).wrapping_sub(file.bytes().as_ptr() as usize);
                keep = Some((h.low_pc, h.high_pc, start..start + h.bins.len()));
            }
        }
        if self.graph.arcs.is_empty() {
            self.graph.reserve(file.arc_count());
        }
        for a in file.arcs() {
            self.has_arcs = true;
            info.arcs += 1;
            self.graph
                .tally(&self.symtab, &self.specs, a.from_pc, a.self_pc, a.count);
        }
        self.graph.profile_done();
        if let Some((low_pc, high_pc, at)) = keep {
            self.hist
                .push_in_file(low_pc, high_pc, file.into_bytes(), at, endian);
        }
        Ok(info)
    }

    /// Reads `profile`'s records; `histograms_done` is the count of histogram records already
    /// added by the caller (then they are skipped here).
    fn add_records(
        &mut self,
        name: &str,
        profile: &Profile,
        histograms_done: Option<usize>,
    ) -> Result<FileInfo, GprofError> {
        let variant = profile.header.variant();
        let mut info = FileInfo {
            version: match profile.header {
                gmon_format::Header::Gnu(h) => h.version,
                _ => 0,
            },
            ..FileInfo::default()
        };
        // gprof's BSD reader always reports call-graph input, arcs or not.
        if variant != Variant::Gnu {
            self.has_arcs = true;
        }
        if self.graph.arcs.is_empty() {
            let arcs = profile
                .records
                .iter()
                .filter(|r| matches!(r, Record::CallArc(_)));
            self.graph.reserve(arcs.count());
        }
        for r in &profile.records {
            match r {
                Record::Histogram(_) if histograms_done.is_some() => {}
                Record::Histogram(h) => {
                    self.hist.add(h, name, &self.whoami, variant)?;
                    // `-i` counts a BSD file's histogram only when it has bins.
                    if variant == Variant::Gnu || !h.bins.is_empty() {
                        info.histograms += 1;
                    }
                }
                Record::CallArc(a) => {
                    self.has_arcs = true;
                    info.arcs += 1;
                    self.graph
                        .tally(&self.symtab, &self.specs, a.from_pc, a.self_pc, a.count);
                }
                Record::BasicBlocks(_) => {
                    self.has_bb = true;
                    info.bb_records += 1;
                }
            }
        }
        self.graph.profile_done();
        if let Some(n) = histograms_done {
            info.histograms = n;
        }
        Ok(info)
    }

    /// Whether some basic-block record was read (gprof warns that it ignores them without `-l`).
    pub fn has_basic_blocks(&self) -> bool {
        self.has_bb
    }

    /// The histograms read so far.
    pub fn histograms(&self) -> &Histograms {
        &self.hist
    }

    /// The arcs tallied so far (before assembly).
    pub fn graph(&mut self) -> &CallGraph {
        self.graph.flush();
        &self.graph
    }

    /// Whether any arc record was read.
    pub fn has_arcs(&self) -> bool {
        self.has_arcs
    }

    /// Credits the histogram and assembles the call graph.
    pub fn finish(self, image: Option<&Image>) -> Result<Analysis, GprofError> {
        let AnalysisBuilder {
            symtab,
            specs,
            hist,
            mut graph,
            has_arcs,
            whoami,
            static_call_graph,
            ..
        } = self;
        let credit = if hist.is_present() {
            let syms = &symtab.symbols;
            hist::assign_samples(&hist, &symtab, &|j| {
                syms.get(j)
                    .is_some_and(|s| specs.selected(TableId::InclFlat, TableId::ExclFlat, s.addr))
            })
        } else {
            hist::Credit {
                time: vec![0.0; symtab.len()],
                total_time: 0.0,
            }
        };
        let mut static_arcs: Box<dyn FnMut(usize) -> Vec<Option<usize>>> = Box::new(|_| Vec::new());
        let mut warnings = Vec::new();
        if static_call_graph && has_arcs {
            match image.map(|i| (i, arch::call_scanner(i.machine))) {
                Some((img, Some(scanner))) => {
                    let finder = StaticCalls::new(img, &symtab, &hist, scanner);
                    static_arcs = Box::new(move |p| finder.calls_from(p));
                }
                Some((img, None)) => {
                    warnings.push(format!(
                        "{whoami}: -c not supported on architecture {}\n",
                        arch::printable_name(
                            img.machine,
                            img.encoding.ptr_width == gmon_format::PtrWidth::Eight,
                            &img.data,
                        )
                    ));
                }
                None => {}
            }
        }
        if has_arcs {
            graph.assemble(&symtab, &specs, &credit.time, &mut *static_arcs);
            if let Some(msg) = graph.dfn_error {
                return Err(GprofError::new(msg.to_string()));
            }
        } else {
            graph.flush();
            for (n, &t) in graph.nodes.iter_mut().zip(&credit.time) {
                n.time = t;
            }
        }
        drop(static_arcs);
        for _ in 0..graph.toporder_botches {
            warnings.push("[propagate] toporder botches\n".to_string());
        }
        Ok(Analysis {
            symtab,
            specs,
            hist,
            total_time: credit.total_time,
            graph,
            has_arcs,
            warnings,
            demangled: names_shown::Demangled::default(),
        })
    }
}
