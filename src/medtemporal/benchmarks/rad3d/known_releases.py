"""The released 3D-RAD test split, file by file: what `medtemporal.provenance.release_licence` may call ``open``.

Source of every checksum: the 41 CSVs of ``3DRAD/test/`` in ``Tang-xiaoxiao/3D-RAD`` at 2e661137
(2025-10-28), byte-identical to ``Tang-xiaoxiao/M3D-RAD`` at 021f55b7 (the URL the paper gives, 004
line 230), MIT licence; sha256 computed from a copy verified byte-identical to the repository's.
Text reviewed: questions of at most 272 characters and answers of at most 73 (a location, a
measurement such as "14x10 mm", yes/no, one of four temporal categories); Task 6 questions state a
label's history as a 0/1 list. No report passage is quoted, so the files are ``open``. The CT-RATE
volumes they name stay under CT-RATE's own terms: a run's licence also depends on the images it
sends (`medtemporal.provenance.run_licence`). A file whose sha256 is not listed here is ``credentialed``.
"""

from __future__ import annotations

from medtemporal.provenance import Release

SOURCE = "Tang-xiaoxiao/3D-RAD@2e661137 3DRAD/test (= Tang-xiaoxiao/M3D-RAD@021f55b7), MIT"
_FILES = (
    ("Task1_Image_Observation/Anatomical_observation.csv",
     "18894f50780e5928f0905c69f98186a70d9fa05f57dbb22a1e000953497c59e6"),
    ("Task1_Image_Observation/Pathological_observation.csv",
     "8465ca70d69d3b94b31a228ba63774a80be55bfdde82e80ea8cf15a70dc8f17d"),
    ("Task2_Anomaly_Detection/Abnormality_feature.csv",
     "6ab0f586fcd79b70c5cacbcacfaed10891472a69aeb814d4a6fd9a6d89afc566"),
    ("Task2_Anomaly_Detection/Abnormality_position.csv",
     "5132ece6f38f84c9ec8bb91c9f3ad97503eb01336c86ccf675ae6c1f3095e42c"),
    ("Task2_Anomaly_Detection/Abnormality_type.csv",
     "bcb22b47336e51051db9065596258c9fa95671b325ee694fb3bee259affd579b"),
    ("Task2_Anomaly_Detection/Diagnosis.csv",
     "9a34176f4e4062cfbb8115b2a443023d7c626e4f04877f251a22b1bfc1e378a7"),
    ("Task3_Medical_Computation/Diameter.csv",
     "e15508ce0c1487a65e483dba1c2bf4b0790a04e1a47d1d25a3871d673926a2c2"),
    ("Task3_Medical_Computation/Size.csv",
     "932466af6fb0d94a72ba6d57340ec8f0b898adc6d481e36542ab9a758c10f375"),
    ("Task3_Medical_Computation/Thickness.csv",
     "50fde84e3547e46b1ad184618aeb8b53d993aff1edd26728625a6fd60106ba41"),
    ("Task4_Existence_Detection/Arterial wall calcification.csv",
     "500eb63ae10d4a4f6d213fb0a846dd0ef5450204734b7dda8205d2c9b7c5fbbb"),
    ("Task4_Existence_Detection/Atelectasis.csv",
     "8e76c5f8989679a3a8c62b676c106e8a350a4938903c5364702803369e5185f6"),
    ("Task4_Existence_Detection/Bronchiectasis.csv",
     "246ebb6882ac8da42acfce6cbcc97827f3d6410a2e040009c7ebc520b35cfebb"),
    ("Task4_Existence_Detection/Cardiomegaly.csv",
     "f72adff1642261a36ab29438e8fda3a66da2fde2742cd1ea696c2e45539f1cfe"),
    ("Task4_Existence_Detection/Consolidation.csv",
     "30b10e54e9884dcc678b51e2225556b31a251b04a00e06262d949bac1dd45c9c"),
    ("Task4_Existence_Detection/Coronary artery wall calcification.csv",
     "3c956c507efeececfc13760a5444e955f5e405863df9a6b74dca82887c4ca009"),
    ("Task4_Existence_Detection/Emphysema.csv",
     "7095cfe11d3b423c76b5bd69512122c872b2bf1451c057ad1955ad4a148e2393"),
    ("Task4_Existence_Detection/Hiatal hernia.csv",
     "800b6d789169254c965716482f3164bc0093e0c92a6e63eb0b04ee3671231fb8"),
    ("Task4_Existence_Detection/Interlobular septal thickening.csv",
     "97ee4eeb152bf0338b62268477df0c97640750c0bd66e417f627e06f513e686a"),
    ("Task4_Existence_Detection/Lung nodule.csv",
     "5d9388479ee343d89fa0a0df08379c860c6a9745e5051580f7e4bd4444c6cdfc"),
    ("Task4_Existence_Detection/Lung opacity.csv",
     "023bce936e36ee94c20b342693f17350d5c4532275ed56a64252c06752544822"),
    ("Task4_Existence_Detection/Lymphadenopathy.csv",
     "e0d03afc2a09bfb6d98463153b100f9a2ceb680f9885bf28c09a8e49f880523b"),
    ("Task4_Existence_Detection/Medical material.csv",
     "783c06ea93052215428c1f081591d89c0975e2f31d8a0adbf8f1fbfc4e5eabbb"),
    ("Task4_Existence_Detection/Mosaic attenuation pattern.csv",
     "cdcb51ca52f694904682022683cc0c9c5876a087339ff0bda31b26e865dd29ba"),
    ("Task4_Existence_Detection/Peribronchial thickening.csv",
     "8649eefa7edd843207af4e1f89eca5be466134e8316dd6b05c462745704e528f"),
    ("Task4_Existence_Detection/Pericardial effusion.csv",
     "1098c15183cfca8ab072017aaba4bc59450405a7c2edd5ab4169a02e25151671"),
    ("Task4_Existence_Detection/Pleural effusion.csv",
     "36e187b28a2f00be61c43e57f74a2beca8e9e13305efac37899f5b32e6b928e3"),
    ("Task4_Existence_Detection/Pulmonary fibrotic sequela.csv",
     "e821e4b665f162b79abf0c8b829dae106c198431399d3b0f4a86fd0a55010be8"),
    ("Task5_Static_Temporal_Diagnosis/b.csv",
     "282c910111bb1be648202a934f9d023dc66df1e28d4a16316726ebd16fd0588c"),
    ("Task5_Static_Temporal_Diagnosis/c.csv",
     "9f5a48c2647f54325152697f243ab45cf4a37db713157dc1cfd49211a9622acb"),
    ("Task5_Static_Temporal_Diagnosis/d.csv",
     "23ab85a5e9697e9e958056135a112d298b9a9994eafd7c5a81b539cee04feb5f"),
    ("Task5_Static_Temporal_Diagnosis/e.csv",
     "b71ad0171a2622d84562d228e2faf13333b072494a270a7f11ebfbe5b38b017a"),
    ("Task5_Static_Temporal_Diagnosis/f.csv",
     "73f69b95898c82e3f83f8eb028b699181a44280df02bbd3fee3092e79ad1a3d7"),
    ("Task5_Static_Temporal_Diagnosis/g.csv",
     "165f561ec606ac05ca20c6530ad4ec35624de01523528b8837a724693e5b9b95"),
    ("Task5_Static_Temporal_Diagnosis/h.csv",
     "add5f6780855a30d54b819578acf33d17213218e757a2b9daeebd208ecc61222"),
    ("Task6_Longitudinal_Temporal_Diagnosis/b.csv",
     "9638e429a9bf2aa51a5bb1a5ca2e17dd7c670eaa04a8f4a60276f29057aa3e8a"),
    ("Task6_Longitudinal_Temporal_Diagnosis/c.csv",
     "b18c662e2dd07c192f529eb81e2c76ad6f9c874004aab91d10834661ecd557d6"),
    ("Task6_Longitudinal_Temporal_Diagnosis/d.csv",
     "32a84ef3ab71b4210d0ec8c6243471b016ff621be7b6b667cae8d104f12a5d9a"),
    ("Task6_Longitudinal_Temporal_Diagnosis/e.csv",
     "4a6d0bdac4a03e13480590e99a173264f1eee4254227845069f315660dd14b20"),
    ("Task6_Longitudinal_Temporal_Diagnosis/f.csv",
     "b77202515b1ae5c872e202acc8b2790948f26eacb3d3668373ac396c614421a6"),
    ("Task6_Longitudinal_Temporal_Diagnosis/g.csv",
     "155c0738bcb9a4774ffe9edbc20dcf14b2684146edd08f8cb00eb4996e2d1165"),
    ("Task6_Longitudinal_Temporal_Diagnosis/h.csv",
     "c0f18f2f3974582b095e94c2f3d57cc5e60a6d8254f7a00c9963109b854b24fb"),
)
RELEASES = tuple(Release(name=f"3DRAD/test/{name}", sha256=sha, licence="open", source=SOURCE,
                         note="short derived questions and answers; no report text")
                 for name, sha in _FILES)
"""One `Release` per released CSV (41)."""
