//! Images for `read`: png, jpeg, gif and webp, downscaled to fit 2000 px.

use std::io::Cursor;
use std::path::Path;

use base64::Engine;
use image::{ImageFormat, ImageReader, imageops::FilterType};
use schemars::JsonSchema;
use serde::Serialize;
use toolgate_core::ToolError;

use crate::file_tools::MAX_IMAGE_SIDE;

/// Largest image file `read` decodes.
pub const MAX_IMAGE_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// An image returned by `read`.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct ImageRead {
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub mime_type: String,
    /// Base64 of the image bytes returned.
    pub data: String,
    /// Width returned, in pixels.
    pub width: u32,
    /// Height returned, in pixels.
    pub height: u32,
    /// Width of the file, in pixels.
    pub original_width: u32,
    /// Height of the file, in pixels.
    pub original_height: u32,
    /// Whether the image was downscaled (and re-encoded).
    pub resized: bool,
    /// Bytes of the image returned (before base64).
    pub bytes: usize,
}

/// The image format of a file to return as an image, by magic bytes first, then
/// by extension.
pub fn image_format(path: &Path, sample: &[u8]) -> Option<ImageFormat> {
    let supported = |f: ImageFormat| {
        matches!(
            f,
            ImageFormat::Png | ImageFormat::Jpeg | ImageFormat::Gif | ImageFormat::WebP
        )
        .then_some(f)
    };
    if let Some(f) = image::guess_format(sample).ok().and_then(supported) {
        return Some(f);
    }
    ImageFormat::from_path(path).ok().and_then(supported)
}

/// Reads, and if needed downscales, the image at `path`, from `file` (opened
/// there, `sample` already read from its start) of `size` bytes.
pub fn read_image(
    path: &Path,
    mut file: std::fs::File,
    sample: Vec<u8>,
    size: u64,
    format: ImageFormat,
) -> Result<ImageRead, ToolError> {
    use std::io::Read;
    let display = path.display();
    if size > MAX_IMAGE_FILE_BYTES {
        return Err(ToolError::Failed(format!(
            "{display} is a {size}-byte image; the limit is {MAX_IMAGE_FILE_BYTES} bytes"
        )));
    }
    let mut bytes = sample;
    (&mut file)
        .take(MAX_IMAGE_FILE_BYTES + 1 - bytes.len() as u64)
        .read_to_end(&mut bytes)
        .map_err(|e| ToolError::io(format!("cannot read {display}"), e))?;
    let undecodable = |e: image::ImageError| {
        let kind = format.extensions_str().first().copied().unwrap_or("?");
        ToolError::caused(
            format!("{display} looks like a {kind} image but cannot be decoded"),
            e,
        )
    };
    let (width, height) = ImageReader::with_format(Cursor::new(&bytes), format)
        .into_dimensions()
        .map_err(undecodable)?;
    let mime = format.to_mime_type().to_string();
    if width.max(height) <= MAX_IMAGE_SIDE {
        return Ok(ImageRead {
            mime_type: mime,
            data: base64::engine::general_purpose::STANDARD.encode(&bytes),
            width,
            height,
            original_width: width,
            original_height: height,
            resized: false,
            bytes: bytes.len(),
        });
    }
    let decoded = ImageReader::with_format(Cursor::new(&bytes), format)
        .decode()
        .map_err(undecodable)?;
    let small = decoded.resize(MAX_IMAGE_SIDE, MAX_IMAGE_SIDE, FilterType::Triangle);
    // JPEG stays JPEG (photos); everything else becomes PNG (lossless).
    let (out_format, small) = if format == ImageFormat::Jpeg {
        (
            ImageFormat::Jpeg,
            image::DynamicImage::ImageRgb8(small.to_rgb8()),
        )
    } else {
        (ImageFormat::Png, small)
    };
    let mut encoded = Cursor::new(Vec::new());
    small
        .write_to(&mut encoded, out_format)
        .map_err(|e| ToolError::caused(format!("cannot re-encode {display}"), e))?;
    let encoded = encoded.into_inner();
    Ok(ImageRead {
        mime_type: out_format.to_mime_type().to_string(),
        data: base64::engine::general_purpose::STANDARD.encode(&encoded),
        width: small.width(),
        height: small.height(),
        original_width: width,
        original_height: height,
        resized: true,
        bytes: encoded.len(),
    })
}

/// A one-line description of an image read.
pub fn describe(path: &str, image: &ImageRead) -> String {
    if image.resized {
        format!(
            "{path}: {} image, {}x{} downscaled to {}x{}",
            image.mime_type, image.original_width, image.original_height, image.width, image.height
        )
    } else {
        format!(
            "{path}: {} image, {}x{}",
            image.mime_type, image.width, image.height
        )
    }
}
