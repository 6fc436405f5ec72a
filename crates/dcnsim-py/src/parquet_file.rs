//! Result tables as Parquet files, written here rather than by pyarrow, so that
//! `dcnsim run --out` loads neither pyarrow nor pandas. A file holds what
//! pyarrow's `pq.write_table(pa.table(columns))` wrote from the same columns
//! before (tests/test_parquet.py reads both back): `double` with NaN as null (a
//! flow not finished, a probe not received: pyarrow's `from_pandas`
//! conversion), `int64`, strings as `large_string` (also in a table without
//! rows), every field nullable, no metadata but the Arrow schema that readers
//! take the types from; snappy pages, as pyarrow's default. Each write is one
//! row group (split at the writer's 1,048,576 rows, as pyarrow splits).
//!
//! A table is handed to the writer [`SLICE_ROWS`] rows at a time, so writing
//! it takes one slice's Arrow copy beside the writer's row group, not a copy
//! of the whole table: the tables of a run already fill most of what its
//! memory estimate allowed, and a failed allocation here would abort the
//! process (issue 36, item 4).

use arrow_array::{ArrayRef, Float64Array, Int64Array, LargeStringArray, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use dcnsim_core::Column;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::errors::ParquetError;
use parquet::file::properties::WriterProperties;
use std::fs::File;
use std::io;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Rows converted to Arrow arrays and handed to the writer at a time: about
/// 5 MB of a probe table. The row groups are the same as with one batch of
/// the whole table (the writer cuts them by its row count); pages may be cut
/// at other rows, so the file reads back as the same table, not always as
/// the same bytes.
const SLICE_ROWS: usize = 1 << 16;

/// A failed write: the file and why.
#[derive(Debug)]
pub struct WriteError {
    pub path: PathBuf,
    pub error: io::Error,
}

/// A Parquet file being written, one row group per [`TableFile::write`].
pub struct TableFile {
    path: PathBuf,
    schema: SchemaRef,
    writer: ArrowWriter<File>,
}

impl TableFile {
    /// Creates `path` with the schema of `columns` and writes them.
    pub fn create<'a>(
        path: &Path,
        columns: impl IntoIterator<Item = (&'a str, &'a Column)> + Clone,
    ) -> Result<TableFile, WriteError> {
        let failed = |error| WriteError {
            path: path.to_owned(),
            error,
        };
        let schema = Arc::new(Schema::new(
            columns
                .clone()
                .into_iter()
                .map(|(name, c)| Field::new(name, data_type(c), true))
                .collect::<Vec<_>>(),
        ));
        let file = File::create(path).map_err(failed)?;
        let props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .build();
        let writer = ArrowWriter::try_new(file, schema.clone(), Some(props))
            .map_err(|e| failed(io_error(e)))?;
        let mut file = TableFile {
            path: path.to_owned(),
            schema,
            writer,
        };
        file.write(columns)?;
        Ok(file)
    }

    /// Appends `columns` (of the file's schema) as one row group, handed to
    /// the writer [`SLICE_ROWS`] rows at a time.
    pub fn write<'a>(
        &mut self,
        columns: impl IntoIterator<Item = (&'a str, &'a Column)>,
    ) -> Result<(), WriteError> {
        let columns: Vec<&Column> = columns.into_iter().map(|(_, c)| c).collect();
        let rows = columns.first().map_or(0, |c| c.len());
        // A table without rows is one empty batch, which gives the file its schema.
        let mut slices = (0..rows.max(1))
            .step_by(SLICE_ROWS)
            .map(|start| start..rows.min(start + SLICE_ROWS));
        slices.try_for_each(|rows| {
            let arrays = columns.iter().map(|c| array(c, rows.clone())).collect();
            let batch = RecordBatch::try_new(self.schema.clone(), arrays)
                .map_err(|e| self.failed(io::Error::other(e)))?;
            self.writer
                .write(&batch)
                .map_err(|e| self.failed(io_error(e)))
        })?;
        self.writer.flush().map_err(|e| self.failed(io_error(e)))
    }

    /// Writes the file's footer.
    pub fn close(self) -> Result<(), WriteError> {
        let path = self.path;
        self.writer.close().map(drop).map_err(|e| WriteError {
            path,
            error: io_error(e),
        })
    }

    fn failed(&self, error: io::Error) -> WriteError {
        WriteError {
            path: self.path.clone(),
            error,
        }
    }
}

/// Writes a whole table to `path`.
pub fn write_table<'a>(
    path: &Path,
    columns: impl IntoIterator<Item = (&'a str, &'a Column)> + Clone,
) -> Result<(), WriteError> {
    TableFile::create(path, columns)?.close()
}

fn data_type(column: &Column) -> DataType {
    match column {
        Column::F64(_) => DataType::Float64,
        Column::I64(_) => DataType::Int64,
        Column::Str(_) => DataType::LargeUtf8,
    }
}

/// Rows `rows` of `column` as an Arrow array.
fn array(column: &Column, rows: Range<usize>) -> ArrayRef {
    match column {
        Column::F64(v) => Arc::new(Float64Array::from_iter(
            v[rows].iter().map(|&x| (!x.is_nan()).then_some(x)),
        )),
        Column::I64(v) => Arc::new(Int64Array::from(v[rows].to_vec())),
        Column::Str(v) => Arc::new(LargeStringArray::from_iter_values(&v[rows])),
    }
}

/// The I/O error inside a Parquet error (a full disk), or the error itself.
fn io_error(e: ParquetError) -> io::Error {
    match e {
        ParquetError::External(inner) => match inner.downcast::<io::Error>() {
            Ok(e) => *e,
            Err(inner) => io::Error::other(inner),
        },
        e => io::Error::other(e),
    }
}
