"""Which weights `pretrained=True` stood for, per torchvision model builder.

Keys are builders under `torchvision.models`, with their subpackage
(`detection.fasterrcnn_resnet50_fpn`); values name the weights enum member
that torchvision's own backward-compatibility shim (0.13 and later) loads
for `pretrained=True` and `pretrained_backbone=True`: the first weights each
model was published with (`IMAGENET1K_V1`, `COCO_V1`, ...), which are not
always `DEFAULT`.  `None`: no single enum member is equivalent (the builder
has no such weights, or they depend on other arguments, such as `quantize`
for the quantized builders or `backbone_name` for `resnet_fpn_backbone`),
so `True` is reported without a fix.  Pretrained enums live in the
builder's subpackage; backbone enums are classification weights in
`torchvision.models`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, Optional


@dataclass(frozen=True)
class Weights:
    """The enum members `pretrained=True` and `pretrained_backbone=True` meant."""

    pretrained: Optional[str]
    backbone: Optional[str] = None


BUILDERS: Dict[str, Weights] = {
    "alexnet": Weights("AlexNet_Weights.IMAGENET1K_V1"),
    "convnext_base": Weights("ConvNeXt_Base_Weights.IMAGENET1K_V1"),
    "convnext_large": Weights("ConvNeXt_Large_Weights.IMAGENET1K_V1"),
    "convnext_small": Weights("ConvNeXt_Small_Weights.IMAGENET1K_V1"),
    "convnext_tiny": Weights("ConvNeXt_Tiny_Weights.IMAGENET1K_V1"),
    "densenet121": Weights("DenseNet121_Weights.IMAGENET1K_V1"),
    "densenet161": Weights("DenseNet161_Weights.IMAGENET1K_V1"),
    "densenet169": Weights("DenseNet169_Weights.IMAGENET1K_V1"),
    "densenet201": Weights("DenseNet201_Weights.IMAGENET1K_V1"),
    "detection.fasterrcnn_mobilenet_v3_large_320_fpn": Weights(
        "FasterRCNN_MobileNet_V3_Large_320_FPN_Weights.COCO_V1",
        "MobileNet_V3_Large_Weights.IMAGENET1K_V1",
    ),
    "detection.fasterrcnn_mobilenet_v3_large_fpn": Weights(
        "FasterRCNN_MobileNet_V3_Large_FPN_Weights.COCO_V1",
        "MobileNet_V3_Large_Weights.IMAGENET1K_V1",
    ),
    "detection.fasterrcnn_resnet50_fpn": Weights(
        "FasterRCNN_ResNet50_FPN_Weights.COCO_V1",
        "ResNet50_Weights.IMAGENET1K_V1",
    ),
    "detection.fasterrcnn_resnet50_fpn_v2": Weights(
        "FasterRCNN_ResNet50_FPN_V2_Weights.COCO_V1",
        "ResNet50_Weights.IMAGENET1K_V1",
    ),
    "detection.fcos_resnet50_fpn": Weights(
        "FCOS_ResNet50_FPN_Weights.COCO_V1",
        "ResNet50_Weights.IMAGENET1K_V1",
    ),
    "detection.keypointrcnn_resnet50_fpn": Weights(
        "KeypointRCNN_ResNet50_FPN_Weights.COCO_V1",
        "ResNet50_Weights.IMAGENET1K_V1",
    ),
    "detection.maskrcnn_resnet50_fpn": Weights(
        "MaskRCNN_ResNet50_FPN_Weights.COCO_V1",
        "ResNet50_Weights.IMAGENET1K_V1",
    ),
    "detection.maskrcnn_resnet50_fpn_v2": Weights(
        "MaskRCNN_ResNet50_FPN_V2_Weights.COCO_V1",
        "ResNet50_Weights.IMAGENET1K_V1",
    ),
    "detection.resnet_fpn_backbone": Weights(None),
    "detection.retinanet_resnet50_fpn": Weights(
        "RetinaNet_ResNet50_FPN_Weights.COCO_V1",
        "ResNet50_Weights.IMAGENET1K_V1",
    ),
    "detection.retinanet_resnet50_fpn_v2": Weights(
        "RetinaNet_ResNet50_FPN_V2_Weights.COCO_V1",
        "ResNet50_Weights.IMAGENET1K_V1",
    ),
    "detection.ssd300_vgg16": Weights("SSD300_VGG16_Weights.COCO_V1", "VGG16_Weights.IMAGENET1K_FEATURES"),
    "detection.ssdlite320_mobilenet_v3_large": Weights(
        "SSDLite320_MobileNet_V3_Large_Weights.COCO_V1",
        "MobileNet_V3_Large_Weights.IMAGENET1K_V1",
    ),
    "efficientnet_b0": Weights("EfficientNet_B0_Weights.IMAGENET1K_V1"),
    "efficientnet_b1": Weights("EfficientNet_B1_Weights.IMAGENET1K_V1"),
    "efficientnet_b2": Weights("EfficientNet_B2_Weights.IMAGENET1K_V1"),
    "efficientnet_b3": Weights("EfficientNet_B3_Weights.IMAGENET1K_V1"),
    "efficientnet_b4": Weights("EfficientNet_B4_Weights.IMAGENET1K_V1"),
    "efficientnet_b5": Weights("EfficientNet_B5_Weights.IMAGENET1K_V1"),
    "efficientnet_b6": Weights("EfficientNet_B6_Weights.IMAGENET1K_V1"),
    "efficientnet_b7": Weights("EfficientNet_B7_Weights.IMAGENET1K_V1"),
    "efficientnet_v2_l": Weights("EfficientNet_V2_L_Weights.IMAGENET1K_V1"),
    "efficientnet_v2_m": Weights("EfficientNet_V2_M_Weights.IMAGENET1K_V1"),
    "efficientnet_v2_s": Weights("EfficientNet_V2_S_Weights.IMAGENET1K_V1"),
    "googlenet": Weights("GoogLeNet_Weights.IMAGENET1K_V1"),
    "inception_v3": Weights("Inception_V3_Weights.IMAGENET1K_V1"),
    "maxvit_t": Weights("MaxVit_T_Weights.IMAGENET1K_V1"),
    "mnasnet0_5": Weights("MNASNet0_5_Weights.IMAGENET1K_V1"),
    "mnasnet0_75": Weights("MNASNet0_75_Weights.IMAGENET1K_V1"),
    "mnasnet1_0": Weights("MNASNet1_0_Weights.IMAGENET1K_V1"),
    "mnasnet1_3": Weights("MNASNet1_3_Weights.IMAGENET1K_V1"),
    "mobilenet_v2": Weights("MobileNet_V2_Weights.IMAGENET1K_V1"),
    "mobilenet_v3_large": Weights("MobileNet_V3_Large_Weights.IMAGENET1K_V1"),
    "mobilenet_v3_small": Weights("MobileNet_V3_Small_Weights.IMAGENET1K_V1"),
    "optical_flow.raft_large": Weights("Raft_Large_Weights.C_T_SKHT_V2"),
    "optical_flow.raft_small": Weights("Raft_Small_Weights.C_T_V2"),
    "quantization.googlenet": Weights(None),
    "quantization.inception_v3": Weights(None),
    "quantization.mobilenet_v2": Weights(None),
    "quantization.mobilenet_v3_large": Weights(None),
    "quantization.resnet18": Weights(None),
    "quantization.resnet50": Weights(None),
    "quantization.resnext101_32x8d": Weights(None),
    "quantization.resnext101_64x4d": Weights(None),
    "quantization.shufflenet_v2_x0_5": Weights(None),
    "quantization.shufflenet_v2_x1_0": Weights(None),
    "quantization.shufflenet_v2_x1_5": Weights(None),
    "quantization.shufflenet_v2_x2_0": Weights(None),
    "regnet_x_16gf": Weights("RegNet_X_16GF_Weights.IMAGENET1K_V1"),
    "regnet_x_1_6gf": Weights("RegNet_X_1_6GF_Weights.IMAGENET1K_V1"),
    "regnet_x_32gf": Weights("RegNet_X_32GF_Weights.IMAGENET1K_V1"),
    "regnet_x_3_2gf": Weights("RegNet_X_3_2GF_Weights.IMAGENET1K_V1"),
    "regnet_x_400mf": Weights("RegNet_X_400MF_Weights.IMAGENET1K_V1"),
    "regnet_x_800mf": Weights("RegNet_X_800MF_Weights.IMAGENET1K_V1"),
    "regnet_x_8gf": Weights("RegNet_X_8GF_Weights.IMAGENET1K_V1"),
    "regnet_y_128gf": Weights(None),
    "regnet_y_16gf": Weights("RegNet_Y_16GF_Weights.IMAGENET1K_V1"),
    "regnet_y_1_6gf": Weights("RegNet_Y_1_6GF_Weights.IMAGENET1K_V1"),
    "regnet_y_32gf": Weights("RegNet_Y_32GF_Weights.IMAGENET1K_V1"),
    "regnet_y_3_2gf": Weights("RegNet_Y_3_2GF_Weights.IMAGENET1K_V1"),
    "regnet_y_400mf": Weights("RegNet_Y_400MF_Weights.IMAGENET1K_V1"),
    "regnet_y_800mf": Weights("RegNet_Y_800MF_Weights.IMAGENET1K_V1"),
    "regnet_y_8gf": Weights("RegNet_Y_8GF_Weights.IMAGENET1K_V1"),
    "resnet101": Weights("ResNet101_Weights.IMAGENET1K_V1"),
    "resnet152": Weights("ResNet152_Weights.IMAGENET1K_V1"),
    "resnet18": Weights("ResNet18_Weights.IMAGENET1K_V1"),
    "resnet34": Weights("ResNet34_Weights.IMAGENET1K_V1"),
    "resnet50": Weights("ResNet50_Weights.IMAGENET1K_V1"),
    "resnext101_32x8d": Weights("ResNeXt101_32X8D_Weights.IMAGENET1K_V1"),
    "resnext101_64x4d": Weights("ResNeXt101_64X4D_Weights.IMAGENET1K_V1"),
    "resnext50_32x4d": Weights("ResNeXt50_32X4D_Weights.IMAGENET1K_V1"),
    "segmentation.deeplabv3_mobilenet_v3_large": Weights(
        "DeepLabV3_MobileNet_V3_Large_Weights.COCO_WITH_VOC_LABELS_V1",
        "MobileNet_V3_Large_Weights.IMAGENET1K_V1",
    ),
    "segmentation.deeplabv3_resnet101": Weights(
        "DeepLabV3_ResNet101_Weights.COCO_WITH_VOC_LABELS_V1",
        "ResNet101_Weights.IMAGENET1K_V1",
    ),
    "segmentation.deeplabv3_resnet50": Weights(
        "DeepLabV3_ResNet50_Weights.COCO_WITH_VOC_LABELS_V1",
        "ResNet50_Weights.IMAGENET1K_V1",
    ),
    "segmentation.fcn_resnet101": Weights(
        "FCN_ResNet101_Weights.COCO_WITH_VOC_LABELS_V1",
        "ResNet101_Weights.IMAGENET1K_V1",
    ),
    "segmentation.fcn_resnet50": Weights(
        "FCN_ResNet50_Weights.COCO_WITH_VOC_LABELS_V1",
        "ResNet50_Weights.IMAGENET1K_V1",
    ),
    "segmentation.lraspp_mobilenet_v3_large": Weights(
        "LRASPP_MobileNet_V3_Large_Weights.COCO_WITH_VOC_LABELS_V1",
        "MobileNet_V3_Large_Weights.IMAGENET1K_V1",
    ),
    "shufflenet_v2_x0_5": Weights("ShuffleNet_V2_X0_5_Weights.IMAGENET1K_V1"),
    "shufflenet_v2_x1_0": Weights("ShuffleNet_V2_X1_0_Weights.IMAGENET1K_V1"),
    "shufflenet_v2_x1_5": Weights("ShuffleNet_V2_X1_5_Weights.IMAGENET1K_V1"),
    "shufflenet_v2_x2_0": Weights("ShuffleNet_V2_X2_0_Weights.IMAGENET1K_V1"),
    "squeezenet1_0": Weights("SqueezeNet1_0_Weights.IMAGENET1K_V1"),
    "squeezenet1_1": Weights("SqueezeNet1_1_Weights.IMAGENET1K_V1"),
    "swin_b": Weights("Swin_B_Weights.IMAGENET1K_V1"),
    "swin_s": Weights("Swin_S_Weights.IMAGENET1K_V1"),
    "swin_t": Weights("Swin_T_Weights.IMAGENET1K_V1"),
    "swin_v2_b": Weights("Swin_V2_B_Weights.IMAGENET1K_V1"),
    "swin_v2_s": Weights("Swin_V2_S_Weights.IMAGENET1K_V1"),
    "swin_v2_t": Weights("Swin_V2_T_Weights.IMAGENET1K_V1"),
    "vgg11": Weights("VGG11_Weights.IMAGENET1K_V1"),
    "vgg11_bn": Weights("VGG11_BN_Weights.IMAGENET1K_V1"),
    "vgg13": Weights("VGG13_Weights.IMAGENET1K_V1"),
    "vgg13_bn": Weights("VGG13_BN_Weights.IMAGENET1K_V1"),
    "vgg16": Weights("VGG16_Weights.IMAGENET1K_V1"),
    "vgg16_bn": Weights("VGG16_BN_Weights.IMAGENET1K_V1"),
    "vgg19": Weights("VGG19_Weights.IMAGENET1K_V1"),
    "vgg19_bn": Weights("VGG19_BN_Weights.IMAGENET1K_V1"),
    "video.mc3_18": Weights("MC3_18_Weights.KINETICS400_V1"),
    "video.mvit_v1_b": Weights("MViT_V1_B_Weights.KINETICS400_V1"),
    "video.mvit_v2_s": Weights("MViT_V2_S_Weights.KINETICS400_V1"),
    "video.r2plus1d_18": Weights("R2Plus1D_18_Weights.KINETICS400_V1"),
    "video.r3d_18": Weights("R3D_18_Weights.KINETICS400_V1"),
    "video.s3d": Weights("S3D_Weights.KINETICS400_V1"),
    "video.swin3d_b": Weights("Swin3D_B_Weights.KINETICS400_V1"),
    "video.swin3d_s": Weights("Swin3D_S_Weights.KINETICS400_V1"),
    "video.swin3d_t": Weights("Swin3D_T_Weights.KINETICS400_V1"),
    "vit_b_16": Weights("ViT_B_16_Weights.IMAGENET1K_V1"),
    "vit_b_32": Weights("ViT_B_32_Weights.IMAGENET1K_V1"),
    "vit_h_14": Weights(None),
    "vit_l_16": Weights("ViT_L_16_Weights.IMAGENET1K_V1"),
    "vit_l_32": Weights("ViT_L_32_Weights.IMAGENET1K_V1"),
    "wide_resnet101_2": Weights("Wide_ResNet101_2_Weights.IMAGENET1K_V1"),
    "wide_resnet50_2": Weights("Wide_ResNet50_2_Weights.IMAGENET1K_V1"),
}
