//! Logical plan, optimizer rules, physical plan (pipelines and stages), and the expression
//! semantics shared by both backends.

pub mod band;
pub mod config;
pub mod dictionary;
pub mod eval;
pub mod expr;
pub mod filter_plan;
pub mod hyperloglog;
pub mod literal_set;
pub mod logical;
pub mod math;
pub mod merged_patterns;
pub mod optimizer;
pub mod parameters;
pub mod physical;
pub mod planner;
pub mod quantile;
pub mod regex;
pub mod replicated;
pub mod selectivity;
pub mod strings;
pub mod window;

pub use band::BandSearch;
pub use config::{SessionConfig, SettingInfo};
pub use dictionary::encode_string_columns;
pub use expr::{
    BinaryOp, ConstantField, ConstantNames, DateField, Expr, ExprDisplay, LikeItem, LikePattern, TruncUnit,
};
pub use literal_set::LiteralSet;
pub use logical::{AggExpr, AggFunc, JoinKind, LogicalPlan, SortKey};
pub use math::MathFunc;
pub use physical::{
    AggState, DictionaryColumn, IntermediateId, KeptChunks, MultiMatch, PhysicalPlan, Pipeline, PipelineOp,
    ReplicaUser, ReplicatedTable, Sink, SortColumn, Source, Stage, StateFunc,
};
pub use planner::{create_physical_plan, create_physical_plan_with};
pub use replicated::{place_replicated_tables, ReplicatedTables};
pub use strings::StringFunc;
pub use window::{Frame, FrameBound, FrameUnits, WindowExpr, WindowFunc};
