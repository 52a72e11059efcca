"""A learner's picture made into a digit the way the training digits were made.

The UCI optical digits (the 8 × 8 images the models train on) come from NIST's normalised bitmaps: each
handwritten digit cut out to its own ink, scaled to fill a 32 × 32 field (its height fills it; a narrow
digit keeps its shape and sits in the middle), then counted in 4 × 4 blocks, 0..16 per block. Every training
digit has ink in its first and its last row, and nearly all reach 16 somewhere. A picture shrunk whole, with
its paper around the digit, is a small blot in a corner to such a model; so a picture is read here as the
data was made:

1. decoded to grey (a transparent background is paper: white), and oriented so that ink is high (the paper,
   the median of the picture's border, made 0; the darkest or lightest stroke, whichever is ink, made 1);
2. cut to the box of its ink (pixels at least half as strong as the strongest stroke);
3. scaled, keeping its shape, so that its longer side is 32 pixels (a box filter: each new pixel the mean of
   the area it covers), and set in the middle of a 32 × 32 field;
4. averaged in 4 × 4 blocks to 8 × 8 (the count of on pixels over 16, for a black-and-white picture), and
   scaled so that its strongest block is 1, as in the training digits.
"""

from __future__ import annotations

import io

import torch

from ..errors import AttentionConfigError

MAX_BYTES = 5 * 2**20  # the uploader's limit (the page's uploader says so; the server takes no more)
MAX_PIXELS = 4096 * 4096  # a larger picture is refused before it is decoded (a decompression bomb)
FIELD = 32  # NIST's normalised bitmaps
BLOCK = 4  # counted in 4 × 4 blocks: 32 / 4 = 8
INK = 0.5  # a pixel at least this strong (of the strongest stroke) is ink, for the box
FAINT = 0.1  # a picture whose strongest stroke differs from its paper by less than this has no digit


def decode(data: bytes) -> torch.Tensor:
    """(H, W) grey levels 0..1 (0 black) of a PNG or JPEG; refused: too large, not a picture, truncated."""
    from PIL import Image, UnidentifiedImageError

    if len(data) > MAX_BYTES:
        raise AttentionConfigError("image", "vision_upload_size", mib=MAX_BYTES // 2**20)
    try:
        img = Image.open(io.BytesIO(data))  # reads the header only
    except Image.DecompressionBombError:
        raise AttentionConfigError("image", "vision_upload_pixels", w="?", h="?") from None
    except (UnidentifiedImageError, OSError, ValueError):
        raise AttentionConfigError("image", "vision_upload_bad") from None
    with img:
        if img.width * img.height > MAX_PIXELS:
            raise AttentionConfigError("image", "vision_upload_pixels", w=img.width, h=img.height)
        try:
            if img.mode in ("RGBA", "LA", "PA") or "transparency" in img.info:  # transparent: paper, white
                rgba = img.convert("RGBA")
                img = Image.alpha_composite(Image.new("RGBA", rgba.size, "white"), rgba)
            grey = img.convert("L")
            w, h = grey.size
            pixels = torch.frombuffer(bytearray(grey.tobytes()), dtype=torch.uint8)
        except (OSError, ValueError, Image.DecompressionBombError):  # truncated, or not decodable whole
            raise AttentionConfigError("image", "vision_upload_bad") from None
    return pixels.reshape(h, w).float() / 255.0


def ink(grey: torch.Tensor) -> torch.Tensor:
    """(H, W) grey 0..1 → (H, W) ink 0..1: the paper (the median of the border) 0, the strongest stroke 1,
    whether the strokes are darker than the paper or lighter; refused when the picture is one even shade."""
    border = torch.cat([grey[0], grey[-1], grey[:, 0], grey[:, -1]])
    paper = float(border.median())
    strokes = (paper - grey) if paper > 0.5 else (grey - paper)
    strongest = float(strokes.max())
    if strongest < FAINT:
        raise AttentionConfigError("image", "vision_upload_blank")
    return (strokes / strongest).clamp(0.0, 1.0)


def centre(ink_map: torch.Tensor) -> torch.Tensor:
    """(H, W) ink 0..1 → (8, 8): cut to the box of its ink, scaled to fill 32 × 32 keeping its shape, set in
    the middle, averaged in 4 × 4 blocks, its strongest block scaled to 1 (the module's steps 2 to 4)."""
    from PIL import Image

    rows = torch.nonzero((ink_map >= INK).any(1)).flatten()
    cols = torch.nonzero((ink_map >= INK).any(0)).flatten()
    if len(rows) == 0:
        raise AttentionConfigError("image", "vision_upload_blank")
    box = ink_map[int(rows[0]) : int(rows[-1]) + 1, int(cols[0]) : int(cols[-1]) + 1]
    h, w = box.shape
    scale = FIELD / max(h, w)
    nh, nw = max(1, min(FIELD, round(h * scale))), max(1, min(FIELD, round(w * scale)))
    small = Image.fromarray(box.contiguous().numpy(), mode="F").resize((nw, nh), Image.Resampling.BOX)
    scaled = torch.tensor(list(small.getdata()), dtype=torch.float32).reshape(nh, nw)
    field = torch.zeros(FIELD, FIELD)
    top, left = (FIELD - nh) // 2, (FIELD - nw) // 2
    field[top : top + nh, left : left + nw] = scaled.clamp(0.0, 1.0)
    side = FIELD // BLOCK
    blocks = field.reshape(side, BLOCK, side, BLOCK).mean(dim=(1, 3))
    return blocks / blocks.max()


def read_digit(data: bytes) -> torch.Tensor:
    """A PNG's or JPEG's bytes as an (8, 8) digit like the training digits (0..1, ink high); an
    AttentionConfigError when it cannot be read or shows no digit."""
    return centre(ink(decode(data)))
