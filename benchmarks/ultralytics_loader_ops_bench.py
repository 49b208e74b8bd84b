"""One loader worker's CPU time per training sample of Ultralytics 8.3.74's detection pipeline (issue 29,
[3090-Y11] in tests/procurement/outside/test_outside_image_workloads_7.py), counted op by op from the code of
that version (the PyPI wheel ultralytics-8.3.74-py3-none-any.whl): data/base.py load_image (cv2.imread, a
resize only where the long side differs from imgsz), data/augment.py Mosaic._mosaic4 (np.full 2 x imgsz canvas,
four tile copies: the three partners come from dataset.buffer, already decoded), RandomPerspective
(cv2.warpAffine to imgsz x imgsz), RandomHSV (BGR2HSV, three LUTs, HSV2BGR), RandomFlip (fliplr, p 0.5),
Format (HWC -> CHW, BGR -> RGB, contiguous). Albumentations (four transforms at p 0.01) and the labels'
Python work are left out. One thread, as in a DataLoader worker (ultralytics/utils/__init__.py calls
cv2.setNumThreads(0)); CPU time (time.process_time), so other processes on a shared host do not count.

Needs opencv-python-headless and numpy (not in the project's venv):
    pip install --target /tmp/cvpkg opencv-python-headless==4.10.0.84 numpy==1.26.4
    PYTHONPATH=/tmp/cvpkg python3 benchmarks/ultralytics_loader_ops_bench.py

Run 2026-12-07 on one core of an AMD EPYC (cloud VM, 2 vCPUs, load average ~5), opencv 4.10.0.84 (its
libjpeg-turbo), synthetic 640 x 480 JPEG at quality 90 (97 KB), first run:
    imread 640x480 1.74 ms, 640x640 2.19, 320x240 0.45; resize 320x240 -> 640 0.39; mosaic canvas + copies
    0.26; warpAffine 1280 -> 640 2.03; RandomHSV 2.27; fliplr copy 2.70 (x 0.5); Format 0.74;
    a mosaic sample 8.40, 8.56, 10.05, 10.94 ms over four runs = 91-119 samples/s a core (the later runs with
    the host busier: CPU time still counts the memory stalls other processes cause); mosaic off (LetterBox +
    warp 640 -> 640) 8.1-11.1 ms. The product's loader_images_per_vcpu: 24.6 a second, 40.6 ms.
"""

import time

import cv2
import numpy as np

cv2.setNumThreads(0)
RNG = np.random.default_rng(0)
S = 640  # imgsz


def _photo(h: int, w: int) -> np.ndarray:
    """Smooth content with grain, so the JPEG decodes like a photo rather than noise or a flat field."""
    base = cv2.resize(
        RNG.integers(0, 255, (h // 16, w // 16, 3), dtype=np.uint8), (w, h), interpolation=cv2.INTER_CUBIC
    )
    return np.clip(base + RNG.normal(0, 6, (h, w, 3)), 0, 255).astype(np.uint8)


def _ms(fn, n: int = 400) -> float:
    fn()
    start = time.process_time()
    for _ in range(n):
        fn()
    return (time.process_time() - start) / n * 1e3


def main() -> None:
    files = {}
    for h, w in [(480, 640), (240, 320), (640, 640)]:
        _, buf = cv2.imencode(".jpg", _photo(h, w), [cv2.IMWRITE_JPEG_QUALITY, 90])
        files[(w, h)] = f"/tmp/ul_bench_{w}x{h}.jpg"
        with open(files[(w, h)], "wb") as f:
            f.write(buf.tobytes())
    res = {f"imread {w}x{h}": _ms(lambda p=p: cv2.imread(p)) for (w, h), p in files.items()}
    im = cv2.imread(files[(640, 480)])
    small = cv2.imread(files[(320, 240)])
    res["resize 320x240 -> 640x480"] = _ms(
        lambda: cv2.resize(small, (640, 480), interpolation=cv2.INTER_LINEAR)
    )

    def mosaic() -> np.ndarray:
        img4 = np.full((S * 2, S * 2, 3), 114, dtype=np.uint8)
        xc, yc = 700, 600
        img4[yc - 480 : yc, xc - 640 : xc] = im
        img4[yc - 480 : yc, xc : 2 * S] = im[:, : 2 * S - xc]
        img4[yc : yc + 480, xc - 640 : xc] = im
        img4[yc : yc + 480, xc : 2 * S] = im[:, : 2 * S - xc]
        return img4

    res["mosaic canvas + 4 copies"] = _ms(mosaic)
    img4 = mosaic()
    c = np.eye(3)
    c[:2, 2] = -S
    r = np.eye(3)
    r[:2] = cv2.getRotationMatrix2D(angle=0, center=(0, 0), scale=1.2)
    t = np.eye(3)
    t[0, 2], t[1, 2] = 0.55 * S, 0.45 * S
    m = (t @ r @ c)[:2]
    res["warpAffine 1280 -> 640"] = _ms(
        lambda: cv2.warpAffine(img4, m, dsize=(S, S), borderValue=(114, 114, 114))
    )
    out = cv2.warpAffine(img4, m, dsize=(S, S), borderValue=(114, 114, 114))

    def hsv() -> np.ndarray:
        g = np.random.uniform(-1, 1, 3) * [0.015, 0.7, 0.4] + 1
        hue, sat, val = cv2.split(cv2.cvtColor(out, cv2.COLOR_BGR2HSV))
        x = np.arange(0, 256, dtype=g.dtype)
        luts = [
            ((x * g[0]) % 180).astype(np.uint8),
            np.clip(x * g[1], 0, 255).astype(np.uint8),
            np.clip(x * g[2], 0, 255).astype(np.uint8),
        ]
        merged = cv2.merge((cv2.LUT(hue, luts[0]), cv2.LUT(sat, luts[1]), cv2.LUT(val, luts[2])))
        return cv2.cvtColor(merged, cv2.COLOR_HSV2BGR)

    res["RandomHSV"] = _ms(hsv)
    res["fliplr copy"] = _ms(lambda: np.ascontiguousarray(np.fliplr(out)))
    res["Format"] = _ms(lambda: np.ascontiguousarray(out.transpose(2, 0, 1)[::-1]))
    res["LetterBox (mosaic off)"] = _ms(
        lambda: cv2.copyMakeBorder(im, 80, 80, 0, 0, cv2.BORDER_CONSTANT, value=(114, 114, 114))
    )
    res["warpAffine 640 -> 640 (mosaic off)"] = _ms(
        lambda: cv2.warpAffine(out, m, dsize=(S, S), borderValue=(114, 114, 114))
    )
    for name, ms in res.items():
        print(f"{name:40s} {ms:6.2f} ms")
    tail = res["RandomHSV"] + 0.5 * res["fliplr copy"] + res["Format"]
    on = res["imread 640x480"] + res["mosaic canvas + 4 copies"] + res["warpAffine 1280 -> 640"] + tail
    off = (
        res["imread 640x480"]
        + res["LetterBox (mosaic off)"]
        + res["warpAffine 640 -> 640 (mosaic off)"]
        + tail
    )
    print(f"mosaic sample {on:.2f} ms = {1000 / on:.0f} a second; mosaic off {off:.2f} ms = {1000 / off:.0f}")


if __name__ == "__main__":
    main()
